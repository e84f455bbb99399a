import { render } from 'preact';
import { App } from './App';
import { interceptLinks } from './router';

interceptLinks();
render(<App />, document.getElementById('app')!);
