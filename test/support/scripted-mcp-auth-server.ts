import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the scripted server received, as it arrived. */
export interface ScriptedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, undecoded. */
  body: string;
}

/**
 * A remote MCP server and its authorization server on one loopback port, answering what the
 * test scripts, for the cases no real server this project runs can be made to answer: metadata
 * that names another issuer than its own, token answers with any `expires_in`, and authorization
 * responses whose `iss` (RFC 9207) names another issuer or is left out. The MCP
 * endpoint answers every request 401 (discovery is all a connect needs of it); the authorization
 * server consents at once, registers anyone, and answers every token request. Every request it
 * receives is recorded, so a test can assert what never reached it.
 */
export interface ScriptedMcpAuthServer {
  /** The MCP endpoint (`http://127.0.0.1:<port>/mcp`). */
  serverUrl: string;
  /** The authorization server's own identifier, where its resource metadata points. */
  issuer: string;
  /** The `issuer` its metadata states; its own unless a test says otherwise. */
  claimedIssuer: string;
  /** The `resource` its resource metadata states; the MCP endpoint unless a test says otherwise. */
  claimedResource: string;
  /**
   * Whether the MCP server publishes resource metadata (RFC 9728); without it, clients take the
   * server's origin for the authorization server, whose metadata is then served there too.
   */
  resourceMetadata: boolean;
  /** `expires_in` of token answers as raw JSON text, sent verbatim; null leaves it out. */
  expiresIn: string | null;
  /** Whether token answers carry a refresh token. */
  refreshTokens: boolean;
  /** Whether its metadata says `authorization_response_iss_parameter_supported: true` (RFC 9207). */
  issParameterSupported: boolean;
  /** The `iss` its authorization responses carry; null leaves it out, as servers did before RFC 9207. */
  responseIss: string | null;
  /** An `error` its authorization responses carry instead of a code (`access_denied`); null: a code. */
  responseError: string | null;
  /**
   * Where its metadata is served: `oauth` at the RFC 8414 well-known URL; `openid` at the OpenID
   * Connect discovery URL only (`<issuer>/.well-known/openid-configuration`), as an OpenID
   * provider that publishes no RFC 8414 document does.
   */
  metadataAt: 'oauth' | 'openid';
  requests: ScriptedRequest[];
  close(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

export async function startScriptedMcpAuthServer(): Promise<ScriptedMcpAuthServer> {
  let issued = 0;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  const script: ScriptedMcpAuthServer = {
    serverUrl: `${base}/mcp`,
    issuer: `${base}/as`,
    claimedIssuer: `${base}/as`,
    claimedResource: `${base}/mcp`,
    resourceMetadata: true,
    expiresIn: '3600',
    refreshTokens: true,
    issParameterSupported: false,
    responseIss: null,
    responseError: null,
    metadataAt: 'oauth',
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
  const metadata = () => ({
    issuer: script.claimedIssuer,
    authorization_endpoint: `${base}/as/authorize`,
    token_endpoint: `${base}/as/token`,
    registration_endpoint: `${base}/as/register`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    ...(script.issParameterSupported
      ? { authorization_response_iss_parameter_supported: true }
      : {}),
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', base);
      script.requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
      });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      switch (url.pathname) {
        case '/mcp':
          res.writeHead(401, {
            'www-authenticate': script.resourceMetadata
              ? `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`
              : 'Bearer',
          });
          res.end();
          return;
        case '/.well-known/oauth-protected-resource/mcp':
          if (!script.resourceMetadata) break;
          json(200, { resource: script.claimedResource, authorization_servers: [script.issuer] });
          return;
        case '/.well-known/oauth-authorization-server/as':
        case '/.well-known/oauth-authorization-server':
          if (script.metadataAt !== 'oauth') break;
          json(200, metadata());
          return;
        case '/as/.well-known/openid-configuration':
          if (script.metadataAt !== 'openid') break;
          // The fields OpenID Connect Discovery requires besides RFC 8414's.
          json(200, {
            ...metadata(),
            jwks_uri: `${base}/as/jwks`,
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
          });
          return;
        case '/as/authorize': {
          const back = new URL(url.searchParams.get('redirect_uri') ?? '');
          if (script.responseError === null) {
            back.searchParams.set('code', `code-${String((issued += 1))}`);
          } else {
            back.searchParams.set('error', script.responseError);
          }
          back.searchParams.set('state', url.searchParams.get('state') ?? '');
          if (script.responseIss !== null) back.searchParams.set('iss', script.responseIss);
          res.writeHead(302, { location: back.href });
          res.end();
          return;
        }
        case '/as/register': {
          const asked = JSON.parse(body) as Record<string, unknown>;
          json(201, {
            ...asked,
            client_id: `registered-${String((issued += 1))}`,
            token_endpoint_auth_method: 'none',
          });
          return;
        }
        case '/as/token': {
          issued += 1;
          // Written by hand, so `expires_in` goes out exactly as the test wrote it.
          const fields = [
            `"access_token":"access-${String(issued)}"`,
            '"token_type":"Bearer"',
            ...(script.refreshTokens ? [`"refresh_token":"refresh-${String(issued)}"`] : []),
            ...(script.expiresIn === null ? [] : [`"expires_in":${script.expiresIn}`]),
          ];
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(`{${fields.join(',')}}`);
          return;
        }
      }
      res.writeHead(404);
      res.end();
    })();
  });
  return script;
}
