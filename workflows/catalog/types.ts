/**
 * The app catalog is data: what Gatehouse knows of each third-party app. This half describes how
 * to connect a user (OAuth); the actions of each app live beside it. Base URLs are defaults that
 * configuration can point elsewhere (APP_URLS), e.g. at a sandbox or the local demo app.
 */
import type { z } from 'zod';
import { inputFieldOf, unsafePath } from './request-path.js';

export type ScopeGrade = 'read' | 'write';

/** How much a call can change at the app; what policies decide on. */
export type CallScope = 'read' | 'write' | 'destructive';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A request to the app's API, relative to its API base URL; the token is added by the caller. */
export interface UpstreamRequest {
  method: HttpMethod;
  /** Path below the API base URL, each segment already URL-encoded (use `encodeURIComponent`). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * One named action (`<app>.<name>`): its scope, the input it accepts (validated before anything
 * runs, and published so an agent knows what to send), how that input becomes a request to the
 * app, and how a successful answer becomes the result.
 */
export interface ActionDefinition<Input extends z.ZodType = z.ZodType> {
  app: string;
  name: string;
  scope: CallScope;
  description: string;
  input: Input;
  // Method syntax on purpose: definitions of any input type then fit one catalog list.
  request(input: z.infer<Input>): UpstreamRequest;
  /** Shapes a 2xx answer; default: the body as it came. */
  result?(response: UpstreamResponse): unknown;
}

/**
 * Declares an action with its input type inferred from its schema. The schema also refuses an
 * input from which the action would build a path the app does not receive as built (a `..` id),
 * naming the field: every action is guarded here, once, and the API answers 400 before any call.
 */
export function defineAction<Input extends z.ZodType>(
  definition: ActionDefinition<Input>,
): ActionDefinition {
  const input = definition.input.superRefine((value, ctx) => {
    // Only an input valid in every other way is built: the builders may assume their schema.
    if (ctx.issues.length > 0) return;
    const unsafe = unsafePath(definition.request(value).path);
    if (unsafe) {
      ctx.addIssue({
        code: 'custom',
        path: inputFieldOf(value, unsafe.segment),
        message: `${unsafe.problem}: the app would receive another path than this action's`,
      });
    }
  });
  return { ...definition, input };
}

export interface OAuthSettings {
  /** Paths are relative to the app's OAuth base URL unless absolute. */
  authorizationPath: string;
  tokenPath: string;
  revocationPath?: string;
  /** Scopes requested when a connect link names none. */
  defaultScopes: string[];
  /** How each provider scope grades: a connection's `granted_scopes` are these grades. */
  scopeGrades: Record<string, ScopeGrade[]>;
  /**
   * Each scope in words for the person connecting (the connect page shows them): what
   * it lets the product do in their account, in the app's own terms, without the scope's name.
   */
  scopeDescriptions?: Record<string, string>;
  scopeSeparator: ' ' | ',';
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post';
  pkce: boolean;
  /** Used when a token response has no `expires_in`; null: the access token does not expire. */
  defaultAccessTokenTtlSeconds: number | null;
  extraAuthorizationParams?: Record<string, string>;
}

/** Where a value sits in a JSON document: the keys from its root, e.g. `['authed_user', 'id']`. */
export type JsonPath = readonly string[];

/**
 * How to learn which account at the app a user authorised: an id the app never reuses nor lets
 * the user change (not a name or an e-mail address). A reconnect must bring the same account.
 * Several `fields` make one identity together (a user within a workspace).
 * - `id_token`: the `sub` of the ID token in the token response (the app is OpenID and the
 *   default scopes include `openid`); openid-client has checked its issuer and audience.
 * - `token_response`: fields of the token response itself.
 * - `api`: fields of the JSON answer to a request made with the new access token.
 */
export type AccountIdentity =
  | { from: 'id_token' }
  | { from: 'token_response'; fields: JsonPath[] }
  | { from: 'api'; request: UpstreamRequest; fields: JsonPath[] };

export interface AppDefinition {
  id: string;
  name: string;
  oauthBaseUrl: string;
  apiBaseUrl: string;
  /** Headers every API request to the app needs (API version pins, media types). */
  apiHeaders?: Record<string, string>;
  oauth: OAuthSettings;
  /**
   * Absent where the app's stable account id is not known for sure: such connections are
   * re-authorised by whichever account comes back, with no check that it is the same one.
   */
  accountIdentity?: AccountIdentity;
  /**
   * Whether a 2xx answer to an action reports a failure in its body, for apps that do so (Slack's
   * `ok: false`, GraphQL `errors`): the caller then gets `{ok: false, data}`, as for any other
   * app-level failure.
   */
  reportsFailure?(body: unknown): boolean;
}
