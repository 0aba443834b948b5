// Traces (OpenTelemetry), off unless configured: OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set (the SDK's own variables, read by its OTLP exporter), or
// an exporter given by a test. Off, every helper here is one boolean test: no span objects, no
// context propagation, nothing on the request path.
//
// What is traced (docs/operations.md, "Traces"): each HTTP request (a SERVER span, joining the
// caller's trace when it sends `traceparent`), the REST operation or GraphQL execution inside it,
// each SQL statement (PostgreSQL; not the embedded database), each processor call, and each job as
// a trace of its own, linked to the request whose transaction enqueued it (jobs.trace_parent) — so
// a webhook delivery or a renewal charge can be followed back to the API call that caused it.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node';

export { SpanKind, SpanStatusCode };

let enabled = false;
const tracer = () => trace.getTracer('billing');

/** Whether traces are being recorded (tracing was started). */
export function tracingEnabled(): boolean {
  return enabled;
}

export interface TracingOptions {
  serviceName?: string;
  /** a test's exporter (spans exported one by one, as they end); default: OTLP over HTTP */
  exporter?: SpanExporter;
}

/**
 * Starts tracing when the environment asks for it (or a test gives an exporter); returns a function
 * that flushes and stops it, or null when tracing stays off.
 */
export async function startTracing(env: NodeJS.ProcessEnv, opts: TracingOptions = {}): Promise<(() => Promise<void>) | null> {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!opts.exporter && !endpoint) return null;
  if (env.OTEL_SDK_DISABLED === 'true') return null;
  let processor;
  if (opts.exporter) processor = new SimpleSpanProcessor(opts.exporter);
  else {
    // Loaded only when used: the exporter and its protobuf code stay out of a process that does not trace.
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName ?? env.OTEL_SERVICE_NAME ?? 'billing' }),
    spanProcessors: [processor],
  });
  provider.register(); // AsyncLocalStorage context, W3C trace-context propagation
  enabled = true;
  return async () => {
    enabled = false;
    await provider.shutdown();
  };
}

/**
 * Runs fn inside a span (the active one while fn runs), ended when fn settles; an error thrown is
 * recorded on it. Tracing off: fn() alone.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span | null) => Promise<T>, opts: { kind?: SpanKind; links?: Link[]; root?: boolean } = {}): Promise<T> {
  if (!enabled) return fn(null);
  return tracer().startActiveSpan(name, { attributes, kind: opts.kind ?? SpanKind.INTERNAL, links: opts.links, root: opts.root }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A request's SERVER span, in the trace of the caller's `traceparent` header when it sent one. */
export function inServerSpan<T>(name: string, header: (name: 'traceparent' | 'tracestate') => string | undefined, attributes: Attributes, fn: (span: Span | null) => Promise<T>): Promise<T> {
  if (!enabled) return fn(null);
  const traceparent = header('traceparent');
  const parent = traceparent ? propagation.extract(context.active(), { traceparent, tracestate: header('tracestate') }) : context.active();
  return context.with(parent, () => inSpan(name, attributes, fn, { kind: SpanKind.SERVER }));
}

/** Starts a span that the caller ends (a statement whose end is a callback); null when off. */
export function startSpan(name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span | null {
  return enabled ? tracer().startSpan(name, { attributes, kind }) : null;
}

/** Runs fn with `span` (from startSpan) as the active span: what fn starts is its child. */
export function withSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Ends a span from startSpan, recording an error if there was one. */
export function endSpan(span: Span | null, err?: unknown): void {
  if (!span) return;
  if (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
  span.end();
}

/** The active span's context as a W3C `traceparent` value (stored with the jobs a request enqueues); null when off or outside a span. */
export function currentTraceparent(): string | null {
  if (!enabled) return null;
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** A link to the span a `traceparent` value names (a job's link to the request that enqueued it). */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (!enabled || !traceparent) return [];
  const ctx = trace.getSpanContext(propagation.extract(context.active(), { traceparent }));
  return ctx ? [{ context: ctx }] : [];
}
