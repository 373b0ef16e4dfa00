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
// signs from then on; the old keys stay published. POST /retire stops
// publishing every key but the newest of each algorithm. POST /sign signs
// {"alg", "header", "claims"} as they are given, with the newest key of alg
// (its kid unless the header names one), so that tests can send tokens of
// any shape signed by the provider's own keys.
import { createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
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

const b64url = (s) => Buffer.from(s).toString('base64url');

// signJWS returns the compact JWS of claims under header, signed with the
// newest key of alg.
function signJWS({ alg, header, claims }) {
  const jwk = keys.find((k) => k.alg === alg);
  const { kid, alg: _, use, ...material } = jwk;
  const key = createPrivateKey({ key: material, format: 'jwk' });
  const input = `${b64url(JSON.stringify({ alg, kid, ...header }))}.${b64url(JSON.stringify(claims))}`;
  const data = Buffer.from(input);
  const sig = {
    RS256: () => sign('sha256', data, key),
    ES256: () => sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }),
    EdDSA: () => sign(null, data, key),
  }[alg]();
  return `${input}.${sig.toString('base64url')}`;
}

function reply(res, body) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

let issuer;
let handler;
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/rotate') {
    // The new keys come first: the provider signs with the first key of an algorithm.
    keys = ['RS256', 'ES256', 'EdDSA'].map(newKey).concat(keys);
    handler = build(issuer).callback();
    reply(res, { kids: keys.map((k) => k.kid) });
    return;
  }
  if (req.method === 'POST' && req.url === '/retire') {
    keys = ['RS256', 'ES256', 'EdDSA'].map((alg) => keys.find((k) => k.alg === alg));
    handler = build(issuer).callback();
    reply(res, { kids: keys.map((k) => k.kid) });
    return;
  }
  if (req.method === 'POST' && req.url === '/sign') {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => reply(res, { token: signJWS(JSON.parse(body)) }));
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
