import { describe, expect, it } from 'vitest';
import { CodedError, ForbiddenError, NotFoundError } from '../src/index.ts';

class GoferForbidden extends ForbiddenError<'GOFER_FORBIDDEN'> {}
class GoferNotFound extends NotFoundError<'GOFER_NOT_FOUND'> {}

describe('a coded refusal', () => {
  it('carries its code, its message and its own class name, and is told apart by kind', () => {
    const err = new GoferForbidden('GOFER_FORBIDDEN', 'Forbidden');
    expect(err).toBeInstanceOf(CodedError);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).not.toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: 'GOFER_FORBIDDEN', message: 'Forbidden', name: 'GoferForbidden' });
    expect(new GoferNotFound('GOFER_NOT_FOUND', 'x').name).toBe('GoferNotFound');
  });
});
