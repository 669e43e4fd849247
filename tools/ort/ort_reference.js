// ONNX Runtime's CPU provider on one .onnx file, run by porta-bench and porta-run beside porta.
//
// Timed under the policy porta-bench uses (warm-up by time, then at least --min-samples runs and
// --min-time seconds); all graph optimisations, sequential execution, --threads intra-op threads.
// Inputs are raw little-endian float32 files; each output is written to --dir as out<i>.bin. With
// --profile, a second InferenceSession with ORT's profiler runs the model --profile times and the mean time
// of each node over all runs but the first is reported. Prints one JSON object, or {"error": ...}.
'use strict';
const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const a = {inputs: [], threads: 1, warmup: 0.1, minSamples: 10, minTime: 0.5, maxTime: 10, profile: 0};
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (key === '--model') a.model = value;
    else if (key === '--ort') a.ort = value;
    else if (key === '--dir') a.dir = value;
    else if (key === '--input') a.inputs.push(value);  // NAME=FILE:D0xD1x...:TYPE
    else if (key === '--threads') a.threads = Number(value);
    else if (key === '--warmup') a.warmup = Number(value);
    else if (key === '--min-samples') a.minSamples = Number(value);
    else if (key === '--min-time') a.minTime = Number(value);
    else if (key === '--max-time') a.maxTime = Number(value);
    else if (key === '--profile') a.profile = Number(value);
    else throw new Error(`unknown option ${key}`);
  }
  return a;
}

// The float32 values of an input file as the tensor type the model takes.
const convert = {
  float32: values => values,
  int64: values => BigInt64Array.from(values, v => BigInt(Math.trunc(v))),
  int32: values => Int32Array.from(values, Math.trunc),
  bool: values => Uint8Array.from(values, v => (v !== 0 ? 1 : 0)),
};

function readFeeds(ort, a) {
  const feeds = {};
  for (const text of a.inputs) {
    const eq = text.indexOf('=');
    const [file, dims, type] = text.slice(eq + 1).split(':');
    const bytes = fs.readFileSync(path.join(a.dir, file));
    const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    feeds[text.slice(0, eq)] = new ort.Tensor(type, convert[type](values), dims.split('x').map(Number));
  }
  return feeds;
}

const now = () => Number(process.hrtime.bigint()) / 1e9;

async function timeRuns(session, feeds, a) {
  let start = now();
  const outputs = await session.run(feeds);
  const first = now() - start;
  for (const end = now() + a.warmup; now() < end;) await session.run(feeds);
  const samples = [], began = now();
  while ((samples.length < a.minSamples || now() - began < a.minTime) && now() - began < a.maxTime) {
    start = now();
    await session.run(feeds);
    samples.push(now() - start);
  }
  const sorted = [...samples].sort((x, y) => x - y), n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return {outputs, timing: {median_s: median, min_s: sorted[0], p90_s: sorted[Math.max(0, Math.ceil(0.9 * n) - 1)],
                            samples: n, first_run_s: first}};
}

// Mean seconds per run of each node's kernel, over the profiled runs after the first.
function nodeTimes(file) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runs = events.filter(e => e.cat === 'Session' && e.name === 'model_run').sort((x, y) => x.ts - y.ts);
  if (runs.length < 2) return [];
  const from = runs[1].ts, count = runs.length - 1, byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < from) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    const entry = byNode.get(name) || {name, op: e.args.op_name, seconds: 0};
    entry.seconds += e.dur * 1e-6 / count;
    byNode.set(name, entry);
  }
  return [...byNode.values()];
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.join(a.ort, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    return {error: `ONNX Runtime is not installed in ${a.ort} (scripts/setup installs onnxruntime-node 1.30.0 ` +
                   `there; PORTA_ORT names another folder): ${String(e.message).split('\n')[0]}`};
  }
  const version = require(path.join(a.ort, 'node_modules', 'onnxruntime-node', 'package.json')).version;
  const options = {executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
                   intraOpNumThreads: a.threads, interOpNumThreads: 1};
  const feeds = readFeeds(ort, a);
  const session = await ort.InferenceSession.create(a.model, options);
  const {outputs, timing} = await timeRuns(session, feeds, a);
  const written = session.outputNames.map((name, i) => {
    const t = outputs[name];
    fs.writeFileSync(path.join(a.dir, `out${i}.bin`), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    return {name, dims: t.dims, type: t.type, file: `out${i}.bin`};
  });
  const result = {...timing, outputs: written, version: `onnxruntime-node ${version}, ${a.threads} threads`};
  if (a.profile > 0) {
    const profiled = await ort.InferenceSession.create(a.model, {...options, enableProfiling: true,
                                                                 profileFilePrefix: path.join(a.dir, 'ort_profile')});
    for (let i = 0; i < a.profile; ++i) await profiled.run(feeds);
    profiled.endProfiling();
    const file = fs.readdirSync(a.dir).find(f => f.startsWith('ort_profile') && f.endsWith('.json'));
    result.profile = file ? nodeTimes(path.join(a.dir, file)) : [];
  }
  return result;
}

main().then(r => console.log(JSON.stringify(r)),
            e => console.log(JSON.stringify({error: `ONNX Runtime failed: ${String(e.message || e).split('\n')[0]}`})));
