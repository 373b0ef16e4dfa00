// Runs the graphql-http audit suite (the GraphQL over HTTP specification's
// conformance audits) against the URL in argv[2], sending the bearer token
// in argv[3] with every request, and prints the results as JSON on stdout:
// [{id, name, status, reason?, response?: {status, contentType, body}}].
import { auditServer } from 'graphql-http';

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: node audit.mjs URL TOKEN');
  process.exit(2);
}

function fetchFn(input, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
}

const results = await auditServer({ url, fetchFn });
const out = [];
for (const r of results) {
  const item = { id: r.id, name: r.name, status: r.status };
  if (r.status !== 'ok') {
    item.reason = r.reason;
    const res = r.response;
    item.response = {
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: await res.text().catch(() => ''),
    };
  }
  out.push(item);
}
console.log(JSON.stringify(out, null, 2));
