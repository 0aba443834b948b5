// A payment processor for tests, injected through the runtime: it wraps the built-in test
// processor and can be held at a gate (slow), made to throw (failing), or delayed at random.
import { testProcessor, type Processor } from '../../src/platform/processor.ts';
import type { TestApp } from './app.ts';

export class FakeProcessor implements Processor {
  readonly name = 'fake';
  charges: string[] = [];
  /** every charge asked for, with the saved method's token when it was one */
  chargeRequests: { reference: string; token: string | undefined; card: string | undefined }[] = [];
  /** every lookup of an interrupted attempt */
  retrievals: string[] = [];
  refunds: string[] = [];
  /** what the next calls do */
  mode: 'pass' | 'throw' | 'decline-refund' = 'pass';
  /** random delay before answering, in ms (0 = none) */
  jitterMs = 0;
  private gate: { promise: Promise<void>; open: () => void } | null = null;
  private waiters: (() => void)[] = [];

  /** Holds every call until release() — the processor is "slow". */
  hold(): void {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.gate = { promise, open };
  }

  release(): void {
    this.gate?.open();
    this.gate = null;
  }

  /** Resolves once a call is waiting at the gate (or has started, without a gate). */
  called(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  private async enter() {
    for (const w of this.waiters.splice(0)) w();
    if (this.jitterMs > 0) await new Promise((r) => setTimeout(r, Math.random() * this.jitterMs));
    if (this.gate) await this.gate.promise;
    if (this.mode === 'throw') throw new Error('processor unreachable (test)');
  }

  async charge(req: Parameters<Processor['charge']>[0]) {
    this.charges.push(req.reference);
    this.chargeRequests.push({ reference: req.reference, token: req.token, card: req.card?.number });
    await this.enter();
    const result = await testProcessor.charge(req);
    this.answered.set(req.reference, result);
    return result;
  }

  /** What the fake has of a charge: only what it answered (a call still at the gate, or one that threw, is unknown). */
  answered = new Map<string, Awaited<ReturnType<Processor['charge']>>>();

  async retrieve(reference: string) {
    this.retrievals.push(reference);
    return this.answered.get(reference) ?? null;
  }

  async save(req: Parameters<Processor['save']>[0]) {
    await this.enter();
    return testProcessor.save(req);
  }

  async refund(req: Parameters<Processor['refund']>[0]) {
    this.refunds.push(req.reference);
    await this.enter();
    if (this.mode === 'decline-refund') return { status: 'failed' as const, code: 'refund_declined' };
    return testProcessor.refund(req);
  }
}

/** Makes the app use a fresh FakeProcessor for every merchant. */
export function injectProcessor(app: TestApp): FakeProcessor {
  const fake = new FakeProcessor();
  app.services.runtime.processorFor = () => fake;
  return fake;
}
