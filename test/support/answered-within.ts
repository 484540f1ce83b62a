/**
 * Resolves as `pending` does, or fails the test when no answer came within `budgetMs`: tests of
 * bounded answers assert that an answer came, never how fast (the budget is far above any
 * deadline, for a loaded machine).
 */
export async function answeredWithin<T>(
  what: string,
  budgetMs: number,
  pending: Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what}: no answer within ${String(budgetMs)} ms`));
    }, budgetMs);
  });
  try {
    return await Promise.race([pending, late]);
  } finally {
    clearTimeout(timer);
  }
}
