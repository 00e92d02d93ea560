#!/usr/bin/env node
// Times an ONNX model in ONNX Runtime (onnxruntime-node, CPU), for comparison with opscope-cli bench
// on the same file. A benchmark tool only: opscope never depends on it. Install ONNX Runtime outside
// the build: `npm install --ignore-scripts onnxruntime-node@1.30.0` in a folder DIR (the CPU library
// is in the package; its install script only fetches GPU parts), then
//   node tests/bench/ort_bench.js --ort DIR MODEL.onnx --input NAME=1x3x224x224 [--threads N]
//        [--repeat N] [--warmup N] [--opt all|basic|extended|disabled] [--ops FILE.json]
//   (NAME=SHAPE:bool: a mask of false)
// Prints one JSON object: {"median_ms", "min_ms", "max_ms", "passes_ms", "threads", "opt", "ort"}.
// --ops FILE.json runs a second session with ONNX Runtime's profiler on and writes each node's
// kernel time over the timed passes, as opscope-cli bench --json does: {"ops": [{"node", "op",
// "self_ms", "order"}]} (median per node, sorted by time; "order": where the node first ran; nodes
// are ONNX Runtime's after its fusions, each named by the tensor it writes).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

function parseArgs(argv) {
    const a = { inputs: [], threads: 1, repeat: 20, warmup: 3, opt: 'all', ort: '', model: '', ops: '' };
    for (let i = 0; i < argv.length; ++i) {
        const k = argv[i];
        const v = () => {
            if (i + 1 >= argv.length) throw new Error(k + ' needs a value');
            return argv[++i];
        };
        if (k === '--input') a.inputs.push(v());
        else if (k === '--threads') a.threads = Number(v());
        else if (k === '--repeat') a.repeat = Number(v());
        else if (k === '--warmup') a.warmup = Number(v());
        else if (k === '--opt') a.opt = v();
        else if (k === '--ort') a.ort = v();
        else if (k === '--ops') a.ops = v();
        else if (k.startsWith('--')) throw new Error('unknown option ' + k);
        else a.model = k;
    }
    if (!a.model) throw new Error('give MODEL.onnx');
    if (!(a.threads >= 1 && a.repeat >= 1 && a.warmup >= 0)) throw new Error('--threads/--repeat >= 1, --warmup >= 0');
    return a;
}

function median(xs) {
    const s = [...xs].sort((x, y) => x - y);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// Each node's kernel time in a profile ONNX Runtime wrote: the median over its last `passes` runs.
function opsOfProfile(file, passes) {
    const events = JSON.parse(fs.readFileSync(file, 'utf8'));
    const byNode = new Map();
    for (const e of events) {
        if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
        const node = e.name.slice(0, -'_kernel_time'.length);
        if (!byNode.has(node)) byNode.set(node, { op: (e.args && e.args.op_name) || '', us: [] });
        byNode.get(node).us.push(e.dur);
    }
    const ops = [];
    for (const [node, v] of byNode) // (a Map keeps the order the nodes first ran in)
        ops.push({ node, op: v.op, self_ms: median(v.us.slice(-passes)) / 1000, order: ops.length });
    return ops.sort((x, y) => y.self_ms - x.self_ms);
}

async function main() {
    const a = parseArgs(process.argv.slice(2));
    const ort = require(a.ort ? path.join(path.resolve(a.ort), 'node_modules', 'onnxruntime-node') : 'onnxruntime-node');
    const options = {
        intraOpNumThreads: a.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: a.opt,
    };
    const session = await ort.InferenceSession.create(a.model, options);
    // Inputs: uniform in [-1, 1) from a fixed linear congruential sequence (the values do not
    // change the time of a convolutional network).
    let seed = 12345;
    const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296) * 2 - 1;
    const feeds = {};
    // NAME=SHAPE (float32, uniform) or NAME=SHAPE:bool (all false: a mask that masks nothing).
    for (const spec of a.inputs) {
        const [name, rest] = spec.split('=');
        const [shape, type] = rest.split(':');
        const dims = shape.split('x').map(Number);
        const count = dims.reduce((p, d) => p * d, 1);
        if (type === 'bool') {
            feeds[name] = new ort.Tensor('bool', new Uint8Array(count), dims);
            continue;
        }
        const data = new Float32Array(count);
        for (let i = 0; i < data.length; ++i) data[i] = next();
        feeds[name] = new ort.Tensor('float32', data, dims);
    }
    for (const name of session.inputNames)
        if (!(name in feeds)) throw new Error('input ' + name + ' not given (--input ' + name + '=SHAPE)');
    for (let i = 0; i < a.warmup + 1; ++i) await session.run(feeds);
    const passes = [];
    for (let i = 0; i < a.repeat; ++i) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        passes.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    if (a.ops) {
        // A session of its own, so that the profiler's cost stays out of the passes above.
        const prefix = path.join(os.tmpdir(), 'ort_profile_' + process.pid);
        const profiled = await ort.InferenceSession.create(a.model, { ...options, enableProfiling: true, profileFilePrefix: prefix });
        for (let i = 0; i < a.warmup + 1 + a.repeat; ++i) await profiled.run(feeds);
        profiled.endProfiling();
        const dir = path.dirname(prefix);
        const written = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(prefix)) && f.endsWith('.json'));
        if (written.length !== 1) throw new Error('ONNX Runtime wrote ' + written.length + ' profiles for ' + prefix);
        const file = path.join(dir, written[0]);
        fs.writeFileSync(a.ops, JSON.stringify({ ops: opsOfProfile(file, a.repeat) }, null, 1) + '\n');
        fs.unlinkSync(file);
    }
    console.log(JSON.stringify({
        median_ms: median(passes), min_ms: Math.min(...passes), max_ms: Math.max(...passes), passes_ms: passes,
        threads: a.threads, opt: a.opt, ort: require(path.join(path.dirname(require.resolve(
            a.ort ? path.join(path.resolve(a.ort), 'node_modules', 'onnxruntime-node') : 'onnxruntime-node')), '..',
            'package.json')).version,
    }));
}

main().catch((e) => {
    console.error('ort_bench: ' + (e && e.message ? e.message : e));
    process.exit(2);
});
