import { Router } from 'express';
import { z } from 'zod';
import { listPolicyVersions } from '../../activities/db/policy-versions.js';
import type { ApiDeps } from '../deps.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { authorize, callerOf } from '../http/authorize.js';
import { pageQuery } from '../http/id-cursor.js';
import { parse } from '../http/validate.js';
import { registerConnectedUserOperation } from '../openapi/registry.js';
import { policyIdParam, policyOut, present } from './policies.js';

const listVersionsQuery = z
  .strictObject(pageQuery('cursor'))
  .meta({ id: 'ListPolicyVersionsQuery' });

/** The cursor of a page of versions: opaque, inside the last version number it showed. */
const encodeVersionCursor = (version: number) =>
  Buffer.from(`v${String(version)}`, 'utf8').toString('base64url');

function decodeVersionCursor(cursor: string): number {
  const match = /^v([1-9][0-9]{0,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const version = Number(match?.[1]);
  if (!match || encodeVersionCursor(version) !== cursor) {
    throw new InvalidRequestError('Invalid request query (cursor: not a cursor from this list).', [
      { path: 'cursor', message: 'not a cursor from this list' },
    ]);
  }
  return version;
}

registerConnectedUserOperation({
  method: 'get',
  path: '/v1/policies/{id}/versions',
  operationId: 'list_policy_versions',
  summary: 'List the versions of a policy, newest first',
  description:
    'Every version as it was written, by whom and when (`updated_at`, `updated_by`); pass `cursor` from one page to get the next. Needs scope `policies:read`.',
  request: { params: policyIdParam, query: listVersionsQuery },
  response: z.object({ data: z.array(policyOut), cursor: z.string().nullable() }),
  errors: [],
  requires: { operation: 'read', scope: 'policies:read' },
  errorExamples: [{ when: 'unknown policy', error: new NotFoundError('Policy "billing-bot"') }],
});

/** A policy's history stays readable. One version is GET .../versions/{version}. */
export function policyVersionRoutes(deps: ApiDeps): Router {
  const router = Router();
  router.get(
    '/v1/policies/:id/versions',
    authorize({ operation: 'read', scope: 'policies:read' }),
    async (req, res) => {
      const { id } = parse(policyIdParam, req.params, 'path');
      const query = parse(listVersionsQuery, req.query, 'query');
      const rows = await listPolicyVersions(deps.sql, callerOf(res).environmentId, id, {
        ...(query.cursor === undefined ? {} : { before: decodeVersionCursor(query.cursor) }),
        limit: query.limit,
      });
      // Every policy has version 1, so no row on the first page means no such policy.
      if (rows.length === 0 && query.cursor === undefined)
        throw new NotFoundError(`Policy "${id}"`);
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      res.json({
        data: items.map(present),
        cursor: rows.length > query.limit && last ? encodeVersionCursor(last.version) : null,
      });
    },
  );
  return router;
}
