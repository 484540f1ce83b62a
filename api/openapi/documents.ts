import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { connectedUsersRegistry, managementRegistry } from './registry.js';
import { tagOf, tagsUsedBy } from './tags.js';

type Document = ReturnType<OpenApiGeneratorV31['generateDocument']>;
type Operation = { tags?: string[] } & Record<string, unknown>;
type PathItem = Record<string, Operation>;
type Schemas = NonNullable<NonNullable<Document['components']>['schemas']>;

const GETTING_STARTED = `**Getting started**

1. Create a connect link (\`POST /v1/connect/links\`) and send your user to its \`url\` to connect an app.
2. Run an action for that user (\`POST /v1/actions/{action}/run\`), or call the app's own API through the proxy (\`/v1/proxy/{app}/…\`).
3. When the answer is 403 \`approval_required\`, a person decides (see Approvals); once approved, send the same call again.
4. Read what happened in the audit log (\`GET /v1/audit\`).`;

const AUTHENTICATION = `**Authentication.** Send an API key as \`Authorization: Bearer gk_<environment>_…\`, or in the \`X-API-Key\` header. A key belongs to one environment and sees only that environment's users, connections, policies and settings. Standard keys are for agents and backends: they connect users, run actions and use the proxy, and read policies and approvals, but cannot decide approvals or change policies. Full keys can do everything, token export included; read-only keys only read. A key's agent id is who policies govern and audit records.`;

const ERRORS = `**Errors.** Every failed request answers \`{"error": {"code": …, "message": …, "retryable": …}}\`, sometimes with fields of its code (\`approval\`, \`reconnect_url\`, \`upstream_status\`, \`issues\`). Each operation lists the codes it can answer, per status, with examples. \`retryable\` says whether the same request can succeed later. When an app itself refuses an action, that is no error: the run answers 200 with \`ok: false\` and the app's answer.`;

const RETRIES = `**Writes and retries.** Send an \`Idempotency-Key\` header with each write you mean to make once, the same key on every retry of it: retries then get the first answer instead of writing twice.`;

function paragraphs(...parts: string[]): string {
  return parts.join('\n\n');
}

export function managementDocument(serverUrl: string): Document {
  return new OpenApiGeneratorV31(managementRegistry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'management API',
      version: '1.0.0',
      description: paragraphs(
        "The settings of an environment, for the people and dashboards that run your integration: auth configs (your apps' OAuth clients), funded access, the branding of the hosted pages, MCP OAuth clients, and the approvers' inbox and decisions.",
        'Every operation answers `{"data": …}` and needs a key with the scope it names in `x-service-scopes`; `x-service-mcp` says whether it only reads (`read`) or changes something (`proposal`). Every operation lists the same error statuses; those it cannot answer say so.',
        AUTHENTICATION,
        ERRORS,
      ),
    },
    servers: [{ url: serverUrl }],
    tags: [
      {
        name: 'Management',
        description:
          'Auth configs, funded access, connect settings, MCP OAuth clients and approval decisions.',
      },
    ],
  });
}

function tagsOf(document: Document): Set<string> {
  const used = new Set<string>();
  for (const item of Object.values(document.paths ?? {}) as PathItem[]) {
    for (const operation of Object.values(item)) {
      for (const tag of operation.tags ?? []) used.add(tag);
    }
  }
  return used;
}

export function connectedUsersDocument(serverUrl: string): Document {
  const document = new OpenApiGeneratorV31(connectedUsersRegistry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'connected-user API',
      version: '1.0.0',
      description: paragraphs(
        'Act on third-party apps for your end users without holding their credentials: connect users through hosted links, run actions or call the apps through the proxy, with every call governed by a policy, held for approval where it asks, and audited.',
        GETTING_STARTED,
        AUTHENTICATION,
        ERRORS,
        RETRIES,
      ),
    },
    servers: [{ url: serverUrl }],
  });
  return { ...document, tags: tagsUsedBy(tagsOf(document)) };
}

/** Parameter names do not matter to a path's identity: `{id}` and `{approvalId}` are one path. */
const samePath = (path: string) => path.replace(/\{[^}]+\}/g, '{}');

/**
 * What /docs shows: both interfaces on one page, every operation under its resource, the
 * connected-user operations first. Where both interfaces define one operation (reading
 * approvals), the connected-user one stands for both: its description gives the management
 * shape too. The two documents themselves stay as the interfaces define them.
 */
/**
 * The management document with the schemas named in `names` renamed, references included: a name
 * both interfaces use for different schemas must not make one page show the wrong one.
 */
function withSchemasRenamed(document: Document, names: readonly string[]): Document {
  if (names.length === 0) return document;
  let text = JSON.stringify(document);
  for (const name of names) {
    text = text.replaceAll(
      JSON.stringify(`#/components/schemas/${name}`),
      JSON.stringify(`#/components/schemas/${name}_management`),
    );
  }
  const renamed = JSON.parse(text) as Document;
  const schemas: Schemas = {};
  for (const [name, schema] of Object.entries(renamed.components?.schemas ?? {})) {
    schemas[names.includes(name) ? `${name}_management` : name] = schema;
  }
  return { ...renamed, components: { ...renamed.components, schemas } };
}

export function docsDocument(serverUrl: string): Document {
  const connected = connectedUsersDocument(serverUrl);
  const connectedSchemas = connected.components?.schemas ?? {};
  const own = managementDocument(serverUrl);
  const differing = Object.entries(own.components?.schemas ?? {})
    .filter(([name, schema]) => {
      const theirs = connectedSchemas[name];
      return theirs !== undefined && JSON.stringify(theirs) !== JSON.stringify(schema);
    })
    .map(([name]) => name);
  const management = withSchemasRenamed(own, differing);
  const paths: Record<string, PathItem> = { ...(connected.paths as Record<string, PathItem>) };
  const taken = new Map(Object.keys(paths).map((path) => [samePath(path), path]));
  for (const [path, item] of Object.entries(management.paths as Record<string, PathItem>)) {
    const existing = paths[taken.get(samePath(path)) ?? path];
    const target: PathItem = existing ?? {};
    for (const [method, operation] of Object.entries(item)) {
      if (target[method]) continue;
      const tag = tagOf(path);
      target[method] = { ...operation, tags: tag ? [tag] : [] };
    }
    if (!existing) {
      paths[path] = target;
      taken.set(samePath(path), path);
    }
  }
  const schemas = { ...connectedSchemas, ...management.components?.schemas };
  const merged: Document = {
    ...connected,
    info: {
      title: 'Gatehouse API',
      version: '1.0.0',
      description: paragraphs(
        'Gatehouse lets your backend or AI agent act on third-party apps (GitHub, Slack, Google, Linear, …) for your end users without holding their credentials. Every call is checked against a policy (allow, hold for a person’s approval, or deny) and audited.',
        GETTING_STARTED,
        AUTHENTICATION,
        ERRORS,
        RETRIES,
        `**Both interfaces on this page.** The operations of the management interface (auth configs, funded access, connect settings, MCP OAuth clients, the decision on an approval) are for \`business\` keys and dashboards: they answer \`{"data": …}\` and name the scope they need. Each interface is also its own document: [connected-user API](${serverUrl}/openapi/connected-users.json) and [management API](${serverUrl}/openapi/management.json).`,
      ),
    },
    paths,
    components: { ...connected.components, schemas },
  };
  return { ...merged, tags: tagsUsedBy(tagsOf(merged)) };
}
