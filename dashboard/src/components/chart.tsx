// The overview's chart: daily revenue (bars, one currency) and failed payments (a line on its own
// scale) drawn by uPlot on a canvas. The canvas says nothing to a screen reader: the container is
// an image named by `summary`, and the page shows the same numbers as a table (docs/dashboard.md).
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatMoney, minorDigits } from './ui.tsx';

export interface ChartDay {
  /** YYYY-MM-DD (UTC) */
  date: string;
  /** minor units of `currency` */
  revenue: number;
  failedPayments: number;
}

const ACCENT = '#1f5fd1';
const ERROR = '#b3261e';
const HEIGHT = 240;

export function RevenueChart({ days, currency, summary }: { days: ChartDay[]; currency: string; summary: string }) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const scale = 10 ** minorDigits(currency);
    const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });
    const data: uPlot.AlignedData = [
      days.map((d) => Date.UTC(+d.date.slice(0, 4), +d.date.slice(5, 7) - 1, +d.date.slice(8, 10)) / 1000),
      days.map((d) => d.revenue / scale),
      days.map((d) => d.failedPayments),
    ];
    const opts: uPlot.Options = {
      width: Math.max(el.clientWidth, 200),
      height: HEIGHT,
      // The days are UTC days; so are the axis labels, whatever the browser's time zone.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: {
        // Half a day either side, so the first and last days' bars are drawn whole.
        x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
        y: { range: (_u, min, max) => [Math.min(0, min), Math.max(max, 1)] },
        failed: { range: (_u, _min, max) => [0, Math.max(max, 4)] },
      },
      series: [
        { label: 'Day', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
        {
          label: `Revenue (${currency})`,
          stroke: ACCENT,
          fill: 'rgba(31, 95, 209, 0.35)',
          width: 1,
          paths: uPlot.paths.bars!({ size: [0.7, 48] }),
          points: { show: false },
          value: (_u, v) => (v == null ? '—' : formatMoney(Math.round(v * scale), currency)),
        },
        {
          label: 'Failed payments',
          scale: 'failed',
          stroke: ERROR,
          width: 2,
          points: { show: true, size: 4 },
          value: (_u, v) => (v == null ? '—' : String(v)),
        },
      ],
      axes: [
        { stroke: '#57606a', grid: { stroke: '#eaeef2' } },
        { stroke: '#57606a', grid: { stroke: '#eaeef2' }, size: 56, values: (_u, splits) => splits.map((v) => compact.format(v)) },
        { scale: 'failed', side: 1, stroke: ERROR, grid: { show: false }, size: 40, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : '')) },
      ],
      cursor: { drag: { x: false, y: false } },
    };
    const plot = new uPlot(opts, data, el);
    // Follow the container's width (the page at 1280 or 390 px, a rotated phone).
    const ro = new ResizeObserver(() => {
      const width = Math.max(el.clientWidth, 200);
      if (width !== plot.width) plot.setSize({ width, height: HEIGHT });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [days, currency]);

  return <div className="chart" ref={box} role="img" aria-label={summary} />;
}
