/**
 * The loop of a delivery process: `sweep` looks for due work every `pollMs` and whenever `wake()` is
 * called (a push-stream entry, a finished request); one sweep runs at a time, and a wake-up during a
 * sweep runs exactly one more after it, so no wake-up is lost and none piles up.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private again = false;
  private halted = false;

  private readonly sweep: () => Promise<void>;
  private readonly pollMs: number;
  private readonly onError: (err: unknown) => void;
  constructor(sweep: () => Promise<void>, pollMs: number, onError: (err: unknown) => void) {
    this.sweep = sweep;
    this.pollMs = pollMs;
    this.onError = onError;
  }

  get stopped(): boolean {
    return this.halted;
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.wake();
  }

  wake(): void {
    if (this.halted) return;
    if (this.sweeping) {
      this.again = true;
      return;
    }
    this.sweeping = true;
    void this.sweep()
      .catch(this.onError)
      .finally(() => {
        this.sweeping = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** No sweep starts after this; one running finishes on its own. */
  stop(): void {
    this.halted = true;
    clearInterval(this.timer);
  }
}
