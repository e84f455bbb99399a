import { render } from 'preact';
import { App } from './App';
import { loadWebConfig, takeGoogleAnswer } from './google';
import { interceptLinks } from './router';

// First of all: an ID token Google put in the URL's fragment leaves the address bar and history.
takeGoogleAnswer();
interceptLinks();
void loadWebConfig().then((config) => render(<App config={config} />, document.getElementById('app')!));
