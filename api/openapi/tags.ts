/**
 * The resources the API documents group their operations by, in the order a newcomer meets them:
 * connect a user, call their apps, govern and review the calls, then the settings. An operation's
 * tag follows from its path, so a route file cannot forget it; a path no tag claims is caught by
 * test/api/openapi-docs.test.ts.
 */
export interface ResourceTag {
  name: string;
  description: string;
  /** Path prefixes (`/v1/users` claims `/v1/users` and `/v1/users/…`). */
  paths: readonly string[];
}

const APPROVALS = `When a policy says \`ask\`, a call does not run: it answers 403 \`approval_required\` with the approval's \`id\`, \`requested_from\` and \`expires_at\`, and a person decides.

**After the decision, send the same call again** (same action or proxy request, user, input and \`Idempotency-Key\`): once approved it runs exactly once and answers with the app's result; the retry must come within an hour of the decision. Once rejected, the same call answers \`denied_by_policy\` until the approval would have expired. Hear of the decision through the \`approval.decided\` webhook, or poll \`GET /v1/approvals/{id}\`. An approval nobody decides in time becomes \`expired\`, and the next identical call raises a new one.

**Two ways to decide through the API.** Both have the same effect and the same rules; pick the one that suits your client:

1. \`POST /v1/approvals/{id}/approve\` or \`POST /v1/approvals/{id}/reject\`: no body (an approval may carry \`{"grant": …}\`); answers \`{id, status, decided_by, grant}\`.
2. \`POST /v1/approvals/{approvalId}/decision\` with \`{"decision": "approve"}\` or \`{"decision": "deny"}\` (an approval may add \`"grant"\`): the management operation, for dashboards and \`business\` keys; answers \`{data: <approval>}\`.

**Grants.** Approving may also grant the same action for a while: \`"grant": {"for": "user" | "any_user", "seconds": n}\`, at most the policy's \`approval.max_grant_seconds\` (400 otherwise, and when that is 0). See Grants.

Either needs a key with scope \`approvals:decide\`: full keys have it, the standard keys agents call with do not. The decider is the key's agent id, recorded as \`decided_by\`. The agent whose call is held can never decide it, and when \`requested_from\` names deciders, only they may (403 \`insufficient_access\` says which rule refused). Deciding an approval that is no longer pending answers 409 \`conflict\`.

**Two-person rules.** A policy (or a rule that asks) may set \`quorum\`: the approval then needs that many different deciders. Each decision is kept (\`decisions\`); the approval stays \`pending\`, with \`approvals_needed\` counting down, until the last approval, and the call runs once after it. One rejection rejects. The same decider twice, and a person who owns one of the held agent's API keys, are refused (403). \`requested_from\` names keys by their agent id (\`admin\`), people (\`person:<email>\`) and groups of the identity provider (\`group:<name>\`).

**For people: the hosted approval page.** Each held call also gets signed decision links, one per name in \`requested_from\` (one link when it is empty). The \`approval.requested\` webhook carries them, so a Slack or e-mail integration only forwards each link to its person. A link opens a page branded like the connect pages that shows the whole request, which agent asks for which user, the policy rule that asked and until when, with Approve and Reject buttons. It needs no API key, works once, and records the decision as the approver the link names (\`decided_by\` \`<approver> (decision link)\`; \`role:approver\` for the one link made when nobody is named).

**Decision links belong to people.** A link goes out only through the \`approval.requested\` webhook and an operator's \`gatehouse approvals link\`, never in an API answer, an MCP result or an MCP elicitation, whatever the key. A link delivered to a webhook endpoint that the held call's own agent set with its key never decides that agent's calls (403 on the page), whichever approver it names.`;

/** Every tag, in the order the documents list them. */
export const RESOURCE_TAGS: readonly ResourceTag[] = [
  {
    name: 'Connect links',
    paths: ['/v1/connect/links'],
    description:
      "Start here. A connect link sends one of your end users through the hosted connect flow for one app: a page branded with your connect settings, the app's own consent screen, then back to your `redirect_url` (or a success page). A link is valid for one hour and works once. You name the user by your own id for them (`user`), in every later call too.",
  },
  {
    name: 'Users',
    paths: ['/v1/users'],
    description:
      'The end users who connected apps, named by your own id for them (`external_id`: the `{user}` in paths and `user` in calls). Deleting a user revokes their connections, deletes their tokens and cancels their pending approvals; their audit history stays.',
  },
  {
    name: 'Connections',
    paths: ['/v1/connections'],
    description:
      "A user's authorization for one app. Gatehouse keeps the tokens encrypted and refreshes them before they expire; only a full-access key can export them. When the app no longer accepts the refresh token, the connection becomes `expired` and calls answer 409 `connection_expired` with a `reconnect_url` to send the user to.",
  },
  {
    name: 'Actions',
    paths: ['/v1/actions'],
    description:
      "Named operations on an app (`<app>.<action>`), each graded `read`, `write` or `destructive`. Running one checks the policy that governs your key's agent: an allowed call runs and answers `{ok: true, data}` (or `ok: false` with `upstream_status` when the app itself refused it); a held call answers 403 `approval_required` (see Approvals); a denied one 403 `denied_by_policy`. Send an `Idempotency-Key` with each write you mean once.",
  },
  {
    name: 'Proxy',
    paths: ['/v1/proxy'],
    description:
      "The app's own API with the user's credentials, for what no action covers. The path after `/v1/proxy/{app}/` goes to the app unchanged, and the user goes in the `Service-User` header. A call is graded by its method (GET `read`; POST, PUT and PATCH `write`; DELETE `destructive`) and governed like an action: never less strictly than the app's own action rules at that scope. The app's answer is passed through as it is, except 400, 429, 502, 503 and 504, which become the `upstream_*` errors.",
  },
  { name: 'Approvals', paths: ['/v1/approvals'], description: APPROVALS },
  {
    name: 'Grants',
    paths: ['/v1/grants'],
    description:
      'What a person added to an approval: "allow the same action of this agent, for this user (or any user), for this long", up to the policy\'s `approval.max_grant_seconds` (0, the default, turns grants off). While a grant is live, the agent\'s calls of that action at that scope that the policy would hold run without asking, and their audit events name the grant; a `deny` is never loosened. A grant ends exactly at `expires_at` or when revoked, whichever comes first, and is checked on every call. Listing needs `grants:read`, revoking `grants:manage` (full keys have both; the standard keys agents call with have neither), and a key never sees or revokes the grants of its own agent.',
  },
  {
    name: 'Audit',
    paths: ['/v1/audit'],
    description:
      'One event per call through actions, the proxy or MCP: which agent, for which user, what it asked, the decision (`allowed`, `blocked` while held, `denied`, `failed` when the app or the connection stopped it), the policy version that decided, and the request and response. Also one per change an operator makes to a remote MCP app, and per refresh that found its tools changed (action `<app>.*`, `via: "operator"`, no user). Events are never changed or deleted.',
  },
  {
    name: 'Policies',
    paths: ['/v1/policies'],
    description:
      'What each agent may do. A policy has defaults per scope (`read`, `write`, `destructive`, each `allow`, `ask` or `deny`) and rules by action, app and scope; the most specific rule wins. It governs the agents it lists, or every agent (`*`). Each replacement is a new version, and audit names the version that decided each call. Reading needs `policies:read`; replacing needs `policies:manage`, which the standard keys agents call with lack, so an agent cannot loosen its own policy.',
  },
  {
    name: 'Role mappings',
    paths: ['/v1/role-mappings'],
    description:
      'Which groups of your identity provider hold which role in this environment, for the people who sign in to the console: `approver` decides the held calls that ask them, `operator` governs (policies, grants, remote tools, connections), `admin` governs and maps groups to roles. A group is named as the provider sends it; `person:<email>` names one person, for providers that send no groups. Roles are read at each request, so a change applies to sessions already open. Reading needs `people:read`, changing `people:manage` (full keys have both; the standard keys agents call with have neither).',
  },
  {
    name: 'Approval notifications',
    paths: ['/v1/notification-channels', '/v1/notification-routes', '/v1/notification-opt-outs'],
    description:
      "Where the people a held call asks are told of it: the environment's channels (an SMTP relay for `email`, a Slack app for `slack`, Microsoft Teams workflow webhooks for `teams`; secrets write-only), the routes saying which audience of a policy's `requested_from` (`group:<name>`, `person:<email>`, `*`) is told through which channel and where (each person, a group mailbox, a Slack channel, a Teams webhook), and the people who opted out of a channel. Relays and webhooks on loopback or private addresses are refused unless NOTIFY_ALLOW_PRIVATE is set. Reading needs `notifications:read`, changing `notifications:manage` (full keys have both; the standard keys agents call with have neither).",
  },
  {
    name: 'Webhooks',
    paths: ['/v1/webhook-endpoint'],
    description:
      'Where Gatehouse tells your backend about approvals: `approval.requested` when a call is held (with one signed decision link per approver) and `approval.decided` when it is approved or rejected, the signal to retry the call. Deliveries are signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature` headers; verify with any Standard Webhooks library) and retried with backoff for up to 24 hours.',
  },
  {
    name: 'MCP',
    paths: ['/v1/mcp/sessions'],
    description:
      "Give an agent Model Context Protocol tools: mint an MCP server address for one of your users, whose tools are the catalog actions that user can use. Every tool call is governed, held and audited exactly like `POST /v1/actions/{action}/run`, as your key's agent. A held call answers with its approval (id, `expires_at`, `requested_from`), never with a decision link. A key revokes the sessions its agent minted; another agent's only with scope `mcp_sessions:manage`.",
  },
  {
    name: 'Apps',
    paths: ['/v1/apps'],
    description:
      'The catalog of third-party apps: per app its OAuth scopes and actions, the redirect URI to register with your OAuth client at the app, and whether this environment can connect it yet. Setting up an app: register an OAuth client at the app with its `redirect_uri`, add it with `POST /v1/auth-configs`, then create connect links. The remote MCP servers registered as apps of the environment (`auth_kind: "mcp"`) follow the catalog, with their tools, grades and snapshot state.',
  },
  {
    name: 'Remote MCP apps',
    paths: ['/v1/mcp-apps'],
    description:
      "Remote MCP servers registered as apps of the environment. Registering lists the server's tools with the MCP SDK's client; each tool becomes an action `<app>.<tool>`, graded by the operator's override, else `readOnlyHint` (read), `destructiveHint: false` (write), else destructive, and governed like every action. Tools are pinned: a tool the server adds or changes after the snapshot an operator accepted is refused with `denied_by_policy` until an operator accepts a snapshot that has it. Reading needs `apps:read`; changing needs `apps:manage`.",
  },
  {
    name: 'OpenAPI apps',
    paths: ['/v1/openapi-apps'],
    description:
      "REST APIs imported from their OpenAPI documents as apps of the environment. Each operation becomes an action `<app>.<operation>`, graded by the operator's override, else the document's `x-gatehouse-scope`, else its method (GET read; POST, PUT, PATCH write; DELETE destructive), and governed like every action. Operations are pinned: one the document adds or changes after the snapshot an operator accepted is refused with `denied_by_policy` until an operator accepts a snapshot that has it. An operation that needs a credential runs with the user's connection to the app, made through a connect link: an API key, bearer token or basic credential typed on the hosted page, or the document's OAuth 2.0 authorization-code flow with an auth config. Reading needs `apps:read`; changing needs `apps:manage`.",
  },
  {
    name: 'Auth configs',
    paths: ['/v1/auth-configs'],
    description:
      "Your own OAuth client for an app (client id and a write-only secret). New connections use the app's newest enabled auth config; disabling one stops new connections, while the connections made with it keep refreshing. With none for an app, connect links for it answer 409 `auth_config_required`, unless funded access is on.",
  },
  {
    name: 'Funded access',
    paths: ['/v1/funded-access'],
    description:
      "Whether the operator's own OAuth clients stand in for apps you have no auth config for, so users can connect them before you register your own.",
  },
  {
    name: 'Connect settings',
    paths: ['/v1/connect-settings'],
    description:
      'The branding of the hosted pages your users and approvers see: display name, accent colour, logo, support link and theme. A change shows on the next page view.',
  },
  {
    name: 'MCP OAuth clients',
    paths: ['/v1/mcp-oauth-clients', '/v1/mcp-client-branding'],
    description:
      'The OAuth clients an MCP integration uses with each app: register one, rotate its secret, select the one in use per app, retire it; and the name and links the clients present to authorization servers.',
  },
];

function claims(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** The tag of the operation at `path`, by its longest claiming prefix; undefined when none. */
export function tagOf(path: string): string | undefined {
  let best: { name: string; length: number } | undefined;
  for (const tag of RESOURCE_TAGS) {
    for (const prefix of tag.paths) {
      if (claims(prefix, path) && prefix.length > (best?.length ?? -1)) {
        best = { name: tag.name, length: prefix.length };
      }
    }
  }
  return best?.name;
}

/** The tag objects of the tags `operations` use, in the documents' order. */
export function tagsUsedBy(used: ReadonlySet<string>): { name: string; description: string }[] {
  return RESOURCE_TAGS.filter((tag) => used.has(tag.name)).map(({ name, description }) => ({
    name,
    description,
  }));
}
