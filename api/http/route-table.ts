import type { Express } from 'express';

/**
 * The part of Express's router (the `router` package, 2.x) read here: each layer of a stack
 * matches a path as the router itself does, and is a route (with its methods) or holds a
 * mounted router's stack.
 */
interface Layer {
  match(path: string): false | { path: string };
  route?: { methods: Record<string, unknown> };
  handle: { stack?: Layer[] };
}

/** One route as the app serves it: the layers a request passes to reach it, and its methods. */
interface Route {
  layers: readonly Layer[];
  /** Upper-case; null when the route takes every method (`router.all`). */
  methods: ReadonlySet<string> | null;
}

/** Methods of a route: Express answers HEAD wherever there is GET. */
function methodsOf(route: NonNullable<Layer['route']>): Set<string> | null {
  const names = Object.keys(route.methods);
  if (names.includes('_all')) return null;
  const methods = new Set(names.map((name) => name.toUpperCase()));
  if (methods.has('GET')) methods.add('HEAD');
  return methods;
}

function routesIn(stack: readonly Layer[], above: readonly Layer[] = []): Route[] {
  return stack.flatMap((layer) => {
    if (layer.route) return [{ layers: [...above, layer], methods: methodsOf(layer.route) }];
    return layer.handle.stack ? routesIn(layer.handle.stack, [...above, layer]) : [];
  });
}

/** Whether `path` reaches the route, each mounted router seeing the rest, as the router trims it. */
function reaches(route: Route, path: string): boolean {
  let rest = path;
  for (const layer of route.layers) {
    let matched: ReturnType<Layer['match']>;
    try {
      matched = layer.match(rest);
    } catch {
      // A path parameter that does not decode: the router itself refuses it before any route.
      return false;
    }
    if (!matched) return false;
    rest = rest.slice(matched.path.length);
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  return true;
}

/** The methods a path is served with, read from the routes the app registered. */
export interface RouteTable {
  /** Every method some route at `path` takes, sorted; null when one takes any method. */
  methodsAt(path: string): string[] | null;
  /** Whether some route at `path` takes `method`. */
  takes(method: string, path: string): boolean;
}

/**
 * Express answers a path's unregistered method as it answers an unknown path (its router has no
 * 405), so the app's own routes are the one list of what each path takes: read from its router
 * once, at the first request, when every route is registered.
 */
export function routeTable(app: Express): RouteTable {
  let routes: Route[] | undefined;
  const routesAt = (path: string) => {
    routes ??= routesIn((app.router as unknown as { stack: Layer[] }).stack);
    return routes.filter((route) => reaches(route, path));
  };
  const methodsAt = (path: string): string[] | null => {
    const methods = new Set<string>();
    for (const route of routesAt(path)) {
      if (route.methods === null) return null;
      for (const method of route.methods) methods.add(method);
    }
    return [...methods].sort();
  };
  return {
    methodsAt,
    takes(method, path) {
      const methods = methodsAt(path);
      return methods === null || methods.includes(method.toUpperCase());
    },
  };
}
