export { buildApp, type AuthAppDeps } from './app';
export { authEnv, loadAuthConfig, type AuthConfig } from './config';
export {
  findOutdatedConnector,
  parseClientInfo,
  compareConnectorVersions,
  type ClientInfo,
  type OutdatedConnector,
} from './domain/connectorRelease';
export { createSmtpMailer, type Mailer, type MailMessage } from './infra/mailer';
export { authMigrations, createAuthStore } from './infra/store';
