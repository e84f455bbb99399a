/**
 * Writes a benchmark's figures to docs/bench/<name>.json and renders its chart to docs/bench/<name>.svg
 * (Vega-Lite compiled to Vega, rendered to SVG in Node: no canvas, no browser).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { REPO_ROOT } from '@oan/testing';

export type Row = Record<string, string | number>;

const OUT = join(REPO_ROOT, 'docs', 'bench');

export async function saveChart(name: string, rows: Row[], spec: Record<string, unknown>): Promise<string> {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify(rows, null, 2)}\n`);
  const full = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    width: 520,
    height: 260,
    background: 'white',
    ...spec,
    data: { values: rows },
  } as TopLevelSpec;
  const view = new View(parse(compile(full).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  const file = join(OUT, `${name}.svg`);
  writeFileSync(file, svg);
  return file;
}

/** A horizontal bar per row (`label`, `value`), the value printed at the end of its bar. */
export function barChart(
  name: string,
  rows: { label: string; value: number }[],
  opts: { title: string; unit: string; log?: boolean },
): Promise<string> {
  const x = {
    field: 'value',
    type: 'quantitative',
    title: opts.unit,
    ...(opts.log ? { scale: { type: 'log', domainMin: 1 } } : {}),
  };
  const y = { field: 'label', type: 'nominal', title: null, sort: null, axis: { labelLimit: 320 } };
  return saveChart(
    name,
    rows.map((r) => ({ label: r.label, value: Math.round(r.value) })),
    {
      title: opts.title,
      layer: [
        // A log scale has no zero: the bars start at 1.
        { mark: 'bar', encoding: { x, y, ...(opts.log ? { x2: { datum: 1 } } : {}) } },
        {
          mark: { type: 'text', align: 'left', dx: 4 },
          encoding: { x, y, text: { field: 'value', format: ',' } },
        },
      ],
    },
  );
}
