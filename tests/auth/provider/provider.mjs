// A real OpenID provider for Kotae's tests: the certified `oidc-provider` package, configured from a
// JSON file (argv[2]) and listening on 127.0.0.1. It prints one JSON line, {"event": "listening",
// "issuer", "port"}, once it accepts connections.
//
// The file: {port, keys: [private JWKs, the first signs], audience (the API's resource indicator),
// clients: [oidc-provider client metadata], services: {client_id: {tenant, groups}} (claims of a
// service's client-credentials tokens), accounts: {id: {name, email, tenant, groups}}}.
// Sign-in uses oidc-provider's development login form (any password); consent is implied.
// Accounts are read from the file at each use, so a test changes a person's groups (or removes them)
// by rewriting it, as an administrator would at the company's provider. Clients allowed the
// refresh_token grant get a refresh token at sign-in, a new one at every refresh.

import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;
const accounts = () => JSON.parse(readFileSync(process.argv[2], 'utf8')).accounts ?? {};
const services = config.services ?? {};
const userScopes = 'openid email profile groups tenant';

const provider = new Provider(issuer, {
  clients: config.clients,
  clientDefaults: { id_token_signed_response_alg: config.keys[0].alg ?? 'ES256', grant_types: ['authorization_code'] },
  jwks: { keys: config.keys },
  claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'], tenant: ['tenant'] },
  conformIdTokenClaims: false, // the ID token carries the claims, as Keycloak's and Entra's do
  findAccount: async (ctx, id) => {
    const account = accounts()[id];
    return account && { accountId: id, claims: async () => ({ sub: id, ...account }) };
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: true,
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => config.audience,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => ({
        scope: 'api',
        audience: resource,
        accessTokenTTL: config.access_token_ttl ?? 300,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: config.keys[0].alg ?? 'ES256' } },
      }),
    },
  },
  // Who the token is for, in the claims Kotae reads: a person's from their account, a service's from
  // the configuration.
  extraTokenClaims: async (ctx, token) => {
    if (token.kind === 'ClientCredentials') return services[token.clientId];
    const account = accounts()[token.accountId];
    return account && { name: account.name, email: account.email, tenant: account.tenant, groups: account.groups };
  },
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(userScopes);
    grant.addResourceScope(config.audience, 'api');
    await grant.save();
    return grant;
  },
  ttl: { Session: 3600, Interaction: 600, Grant: 3600, AuthorizationCode: 60, IdToken: 300, RefreshToken: 3600 },
});
provider.on('server_error', (ctx, error) => console.error(JSON.stringify({ event: 'server_error', message: String(error) })));

const server = provider.listen(config.port, '127.0.0.1', () => {
  console.log(JSON.stringify({ event: 'listening', issuer, port: server.address().port }));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
