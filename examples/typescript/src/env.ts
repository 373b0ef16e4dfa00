// The example's settings, from the environment.

/** Base URL of the service (no trailing slash). */
export const apiURL = (process.env.API_URL ?? 'http://localhost:8080').replace(/\/+$/, '');

/**
 * requireEnv returns the variable's value, or exits with a message that
 * says how to get one when it is unset or empty.
 */
export function requireEnv(name: string, hint: string): string {
  const value = process.env[name]?.trim();
  if (!value) {
    console.error(`${name} is not set: ${hint}`);
    process.exit(2);
  }
  return value;
}

/** How to make a token of each kind. */
export const tokenHint = {
  openAPI:
    'an Open API token, printed by `go run ./cmd/server` or made by `go run ./cmd/server token create --configurator 1`',
  codegen:
    'a token to introspect the schema with (CODEGEN_TOKEN, or else TOKEN); a server with PERSISTED_ONLY=true ' +
    'lets only a dashboard token introspect: `go run ./cmd/server token create --dashboard --owner 1`',
};
