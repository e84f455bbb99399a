export { signOanJwt, verifyJwt, InvalidJwtError, type OanJwtOptions, type VerifiedJwt } from './jwt';
export { generateApiKey, hashApiKey, isApiKey } from './apiKey';
export { credentialsMigration } from './migration';
export { checkCredentials, registeredPlatformOf, type CredentialCheck } from './credentialView';
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
} from './authenticator';
export {
  requireAuth,
  principalOf,
  authenticateSocketToken,
  bearerToken,
  realmNotAllowed,
  accountBanned,
  type AuthMode,
  type RequireAuthOptions,
} from './hooks';
export { createServiceApp, type ServiceAppOptions } from './serviceApp';
