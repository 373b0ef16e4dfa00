// The REST v1 client: openapi-fetch over the types openapi-typescript
// generated from the served OpenAPI document.
import createClient from 'openapi-fetch';

import type { paths } from './generated/openapi';

/** restClient returns a client of /api/open-api/v1 that sends token. */
export function restClient(apiURL: string, token: string) {
  return createClient<paths>({
    baseUrl: `${apiURL}/api/open-api/v1`,
    headers: { Authorization: `Bearer ${token}` },
  });
}
