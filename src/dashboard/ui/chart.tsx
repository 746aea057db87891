/** A uPlot line chart that follows its container's width (charts of the last hour, docs/reference/dashboard.md Overview). */
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  readonly label: string;
  readonly values: readonly (number | null)[];
  readonly color: string;
}

export function Chart(props: { title: string; times: readonly number[]; series: readonly Series[]; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = [props.times.map((t) => t / 1000), ...props.series.map((s) => [...s.values])] as uPlot.AlignedData;
  useEffect(() => {
    const el = box.current!;
    const width = () => Math.max(200, el.clientWidth);
    const opts: uPlot.Options = {
      width: width(),
      height: 200,
      legend: { show: true },
      scales: { x: { time: true } },
      axes: [{}, { label: props.unit, size: 56 }],
      series: [{}, ...props.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, spanGaps: false, points: { show: true, size: 4 } }))],
    };
    plot.current = new uPlot(opts, data, el);
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: width(), height: 200 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
    // The series layout is fixed per chart; data changes go through setData below.
  }, [props.series.length]);
  useEffect(() => {
    plot.current?.setData(data);
  });
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title}, last hour`} />
    </figure>
  );
}
