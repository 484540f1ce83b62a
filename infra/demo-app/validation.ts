import type { Response } from 'express';
import type { z } from 'zod';

/** 422 `{ error: 'validation_failed', details: [{ path, message }] }`. */
export function sendValidationError(res: Response, error: z.ZodError): void {
  res.status(422).json({
    error: 'validation_failed',
    details: error.issues.map((issue) => ({
      path: issue.path.map(String).join('.'),
      message: issue.message,
    })),
  });
}
