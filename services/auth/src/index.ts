export { buildApp, type AuthAppDeps } from './app';
export { authEnv, loadAuthConfig, type AuthConfig } from './config';
export { createSmtpMailer, type Mailer, type MailMessage } from './infra/mailer';
export { authMigrations, createAuthStore } from './infra/store';
