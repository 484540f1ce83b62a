import express, { type Router } from 'express';
import { z } from 'zod';
import { sendValidationError } from './validation.js';
import { faultSettingsSchema, type DemoFaults } from './faults.js';
import { lastApiRequest } from './last-request.js';
import type { StatsCounter } from './stats.js';

export const demoClientSchema = z.object({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  redirectUris: z.array(z.url()).min(1),
});

export interface AdminControls {
  faults: DemoFaults;
  stats: StatsCounter;
  revokeGrants: (account: string) => Promise<number>;
  setAccessTokenTtl: (seconds: number) => void;
  setTokenExpiresIn: (raw: string | null) => void;
  registerClient: (client: z.infer<typeof demoClientSchema>) => Promise<void>;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Test-fixture controls under /__admin. Unauthenticated on purpose: the app only ever listens on
 * loopback and exists to be driven by tests and the local demo.
 */
export function adminRouter(controls: AdminControls): Router {
  const router = express.Router();
  router.use(express.json());

  router.get('/faults', (_req, res) => {
    res.json(controls.faults.current());
  });

  router.post('/faults', (req, res) => {
    const body = faultSettingsSchema.safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    res.json(controls.faults.set(body.data));
  });

  router.delete('/faults', (_req, res) => {
    controls.faults.reset();
    res.status(204).end();
  });

  router.post('/revoke-grant', async (req, res) => {
    const body = z.object({ account: z.string().min(1) }).safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    res.json({ revokedGrants: await controls.revokeGrants(body.data.account) });
  });

  router.get('/stats', (_req, res) => {
    res.json(controls.stats.snapshot());
  });

  router.post('/stats/reset', (_req, res) => {
    controls.stats.reset();
    res.status(204).end();
  });

  /** The last authenticated request to the resource API (`null` before the first). */
  router.get('/last-request', (req, res) => {
    res.json(lastApiRequest(req.app));
  });

  router.post('/token-ttl', (req, res) => {
    const schema = z.object({ accessTokenTtlSeconds: z.number().int().min(1).max(31_536_000) });
    const body = schema.safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    controls.setAccessTokenTtl(body.data.accessTokenTtlSeconds);
    res.json(body.data);
  });

  /** `expires_in` of token answers from now on, as raw JSON text (`1e308`, `-5`, `"abc"`). */
  router.post('/token-expires-in', (req, res) => {
    const body = z
      .object({ expiresIn: z.string().refine(isJson, 'must be one JSON value, as text') })
      .safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    controls.setTokenExpiresIn(body.data.expiresIn);
    res.json(body.data);
  });

  router.delete('/token-expires-in', (_req, res) => {
    controls.setTokenExpiresIn(null);
    res.status(204).end();
  });

  router.post('/clients', async (req, res) => {
    const body = demoClientSchema.safeParse(req.body);
    if (!body.success) {
      sendValidationError(res, body.error);
      return;
    }
    await controls.registerClient(body.data);
    res.status(204).end();
  });

  return router;
}
