// A real OpenID provider for the Go tests (oidc-provider): it listens on
// 127.0.0.1 (a free port), prints {"issuer": "http://127.0.0.1:PORT"} on
// stdout once it serves, and issues JWT access tokens (RFC 9068) through
// the client credentials grant for the resource indicator (audience) asked,
// by default OIDCTEST_AUDIENCE.
//
// OIDCTEST_CLIENTS is a JSON object of clients: {"ID": {"claims": {...},
// "alg": "RS256"|"ES256"|"EdDSA", "ttl": SECONDS}}; each client's secret is
// its id, its tokens carry its claims, are signed with alg and live ttl
// seconds. POST /rotate adds a new key of every algorithm (a new kid), which
// signs from then on; the old keys stay published.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const audience = process.env.OIDCTEST_AUDIENCE || 'https://catalogue.test';
const clients = JSON.parse(process.env.OIDCTEST_CLIENTS || '{}');
const scopes = 'catalogue:dashboard catalogue:open_api';

function newKey(alg) {
  const kind = { RS256: ['rsa', { modulusLength: 2048 }], ES256: ['ec', { namedCurve: 'P-256' }], EdDSA: ['ed25519', {}] }[alg];
  const { privateKey } = generateKeyPairSync(kind[0], kind[1]);
  return { ...privateKey.export({ format: 'jwk' }), kid: `${alg}-${randomUUID().slice(0, 8)}`, alg, use: 'sig' };
}

let keys = ['RS256', 'ES256', 'EdDSA'].map(newKey);

function build(issuer) {
  const provider = new Provider(issuer, {
    clients: Object.keys(clients).map((id) => ({
      client_id: id,
      client_secret: id,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: scopes,
    })),
    scopes: ['openid', ...scopes.split(' ')],
    jwks: { keys },
    cookies: { keys: ['oidctest-cookie-key'] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => {
          const c = clients[client.clientId] || {};
          return {
            scope: scopes,
            audience: resource,
            accessTokenTTL: c.ttl || 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: c.alg || 'RS256' } },
          };
        },
      },
    },
    extraTokenClaims: (ctx, token) => (clients[token.clientId] || {}).claims,
  });
  provider.proxy = false;
  return provider;
}

let issuer;
let handler;
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/rotate') {
    // The new keys come first: the provider signs with the first key of an algorithm.
    keys = ['RS256', 'ES256', 'EdDSA'].map(newKey).concat(keys);
    handler = build(issuer).callback();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kids: keys.map((k) => k.kid) }));
    return;
  }
  handler(req, res);
});
server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  handler = build(issuer).callback();
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
