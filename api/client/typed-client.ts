import createClient, {
  type Client,
  type ClientPathsWithMethod,
  type MaybeOptionalInit,
  type MethodResponse,
} from 'openapi-fetch';
import type { Transport } from './transport.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
// As openapi-fetch's own Client: any generated `paths`.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type Paths = {};
type Media = 'application/json';

type RequiredKeysOf<T> = {
  [K in keyof T]-?: object extends Pick<T, K> ? never : K;
}[keyof T];

/** The options of one operation (`params`, `body`, `headers`, `signal`, …), required when it has required ones. */
type InitOf<I> = RequiredKeysOf<I> extends never ? [init?: I] : [init: I];

/**
 * One HTTP method over every path of an interface that has it, typed from the generated
 * document: the path's parameters, query, headers and body, and the success answer. Failures
 * throw the error class of their code (errors.ts), so the promise holds the answer itself.
 */
export type Operation<P extends Paths, M extends Method> = <
  Path extends ClientPathsWithMethod<Client<P, Media>, M>,
  Init extends InitFor<P, Path, M>,
>(
  path: Path,
  ...init: InitOf<Init>
) => Promise<MethodResponse<Client<P, Media>, M, Path, Init>>;

type InitFor<P, Path, M extends Method> = Path extends keyof P
  ? M extends keyof P[Path]
    ? MaybeOptionalInit<P[Path], M>
    : never
  : never;

/** Every operation of one interface: `GET`, `POST`, `PUT`, `PATCH`, `DELETE` over its paths. */
export interface TypedClient<P extends Paths> {
  GET: Operation<P, 'get'>;
  POST: Operation<P, 'post'>;
  PUT: Operation<P, 'put'>;
  PATCH: Operation<P, 'patch'>;
  DELETE: Operation<P, 'delete'>;
}

type Untyped = (path: string, init?: object) => Promise<{ data?: unknown }>;

/** openapi-fetch over the transport: it builds the requests; the transport sends them. */
export function typedClient<P extends Paths>(
  baseUrl: string,
  transport: Transport,
): TypedClient<P> {
  const client = createClient<P, Media>({ baseUrl, fetch: (request) => transport(request) });
  const unwrap =
    (call: Untyped) =>
    async (path: string, init?: object): Promise<unknown> =>
      (await call(path, init)).data;
  // openapi-fetch's own methods are typed the same way (by path and method); only the answer's
  // error branch is gone, because the transport throws instead.
  return {
    GET: unwrap(client.GET as Untyped),
    POST: unwrap(client.POST as Untyped),
    PUT: unwrap(client.PUT as Untyped),
    PATCH: unwrap(client.PATCH as Untyped),
    DELETE: unwrap(client.DELETE as Untyped),
  } as TypedClient<P>;
}
