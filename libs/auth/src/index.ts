export { signOanJwt, verifyJwt, InvalidJwtError, type OanJwtOptions, type VerifiedJwt } from './jwt.ts';
export { generateApiKey, hashApiKey, isApiKey } from './apiKey.ts';
export { credentialsMigration } from './migration.ts';
export {
  bannedAmong,
  checkCredentials,
  notBanned,
  registeredPlatformOf,
  type CredentialCheck,
} from './credentialView.ts';
export {
  createAuthenticator,
  AuthError,
  LEGACY_REALM,
  type Authenticator,
  type AuthenticatorOptions,
  type AuthenticateOptions,
  type AuthFailure,
  type AuthenticatedPrincipal,
  type Principal,
} from './authenticator.ts';
export {
  requireAuth,
  principalOf,
  authenticateSocketToken,
  bearerToken,
  realmNotAllowed,
  accountBanned,
  type AuthMode,
  type RequireAuthOptions,
} from './hooks.ts';
export { commandIdOf, createServiceApp, type ServiceAppOptions } from './serviceApp.ts';
export {
  COMMAND_ID_HEADER,
  INTERNAL_CALL_HEADER,
  internalCallHeaders,
  internalCommandHeaders,
  isInternalCall,
} from './internalCall.ts';
