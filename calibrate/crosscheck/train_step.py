#!/usr/bin/env python3
"""A real training step on one GPU, profiled: the measured side of the simulator's closed loop.

  python3 calibrate/crosscheck/train_step.py --out DIR [--config NAME]... [--steps N]

The model is Llama 3.2 1B's architecture (meta-llama/Llama-3.2-1B config.json: 16 layers, hidden
2048, 32 query heads and 8 key/value heads of 64, SwiGLU FFN 8192, vocabulary 128256, tied
embeddings, RMSNorm eps 1e-5, RoPE theta 500000), randomly initialised, trained on random tokens,
written as torchtitan's llama3 model is (separate q/k/v/o and w1/w2/w3 projections, nn.RMSNorm,
RoPE by complex multiplication, PyTorch SDPA) and trained as torchtitan trains it on one GPU
without FSDP (torchtitan/distributed/utils.py maybe_enable_amp): fp32 parameters under
torch.autocast(bfloat16), so gradients are fp32; cross-entropy on the fp32 logits; gradient norm
clipped to 1.0 (foreach); AdamW with fused=True (torchtitan's default implementation "fused", lr
8e-4, weight decay 0.1); one micro-batch per step, gradients set to None after the step. Eager
mode, no activation checkpointing.

Each configuration (sequence length x micro-batch) runs 5 warm-up steps, then 10 steps timed with
CUDA events around the loop (the unprofiled step time), then the PyTorch profiler (CPU and CUDA
activities, one warm-up step, three active ones, prof.step() once per step) and writes
DIR/<config>.json (Kineto's Chrome trace, as `trainsim compare` and `calibrate fit-stack --trace`
read it). DIR/summary.json holds per configuration: the step times, the peak memory
(torch.cuda.max_memory_allocated), the attention kernel SDPA ran, and the versions.
Exit status: 0 every configuration ran; 1 one failed (the others are still written); 2 no GPU.
"""
import argparse
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

# (sequence length, micro-batch): the same 16K tokens per step at three sequence lengths, and a
# small step whose kernels are shorter than their launches.
CONFIGS = {
    "s2048-mb8": (2048, 8),
    "s4096-mb4": (4096, 4),
    "s8192-mb2": (8192, 2),
    "s1024-mb1": (1024, 1),
}

LLAMA_3_2_1B = dict(layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, ffn=8192, vocab=128256,
                    norm_eps=1e-5, rope_theta=500000.0)


def build_model(torch, cfg, seq_len, gqa_in_sdpa):
    nn = torch.nn
    F = torch.nn.functional

    def rope(seq, head_dim, theta):
        freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        angles = torch.outer(torch.arange(seq, dtype=torch.float32), freqs)
        return torch.polar(torch.ones_like(angles), angles)  # complex64 [seq, head_dim / 2]

    def apply_rope(x, freqs):  # x: [b, s, h, d]
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        out = torch.view_as_real(xc * freqs[None, :, None, :]).flatten(3)
        return out.type_as(x)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            h, d = cfg["heads"], cfg["head_dim"]
            self.wq = nn.Linear(cfg["hidden"], h * d, bias=False)
            self.wk = nn.Linear(cfg["hidden"], cfg["kv_heads"] * d, bias=False)
            self.wv = nn.Linear(cfg["hidden"], cfg["kv_heads"] * d, bias=False)
            self.wo = nn.Linear(h * d, cfg["hidden"], bias=False)

        def forward(self, x, freqs):
            b, s, _ = x.shape
            d = cfg["head_dim"]
            q = apply_rope(self.wq(x).view(b, s, -1, d), freqs)
            k = apply_rope(self.wk(x).view(b, s, -1, d), freqs)
            v = self.wv(x).view(b, s, -1, d)
            rep = cfg["heads"] // cfg["kv_heads"]
            if not gqa_in_sdpa:  # torchtitan's repeat_kv
                k = k.repeat_interleave(rep, dim=2)
                v = v.repeat_interleave(rep, dim=2)
            extra = {"enable_gqa": True} if gqa_in_sdpa else {}
            out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                 is_causal=True, **extra)
            return self.wo(out.transpose(1, 2).reshape(b, s, -1))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(cfg["hidden"], cfg["ffn"], bias=False)
            self.w2 = nn.Linear(cfg["ffn"], cfg["hidden"], bias=False)
            self.w3 = nn.Linear(cfg["hidden"], cfg["ffn"], bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm = nn.RMSNorm(cfg["hidden"], eps=cfg["norm_eps"])
            self.attention = Attention()
            self.ffn_norm = nn.RMSNorm(cfg["hidden"], eps=cfg["norm_eps"])
            self.feed_forward = FeedForward()

        def forward(self, x, freqs):
            x = x + self.attention(self.attention_norm(x), freqs)
            return x + self.feed_forward(self.ffn_norm(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(cfg["vocab"], cfg["hidden"])
            self.layers = nn.ModuleList(Block() for _ in range(cfg["layers"]))
            self.norm = nn.RMSNorm(cfg["hidden"], eps=cfg["norm_eps"])
            self.output = nn.Linear(cfg["hidden"], cfg["vocab"], bias=False)
            self.output.weight = self.tok_embeddings.weight  # tied, as Llama 3.2 1B
            self.register_buffer("freqs", rope(seq_len, cfg["head_dim"], cfg["rope_theta"]), persistent=False)
            for p in self.parameters():
                if p.dim() > 1:
                    nn.init.normal_(p, std=0.02)

        def forward(self, tokens):
            x = self.tok_embeddings(tokens)
            for layer in self.layers:
                x = layer(x, self.freqs)
            return self.output(self.norm(x))

    return Model


def sdpa_backend(torch):
    """(gqa_in_sdpa, backend list): flash attention, with enable_gqa when this PyTorch has it."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    q = torch.randn(1, 32, 256, 64, device="cuda", dtype=torch.bfloat16)
    kv = torch.randn(1, 8, 256, 64, device="cuda", dtype=torch.bfloat16)
    for gqa in (True, False):
        try:
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                k = kv if gqa else kv.repeat_interleave(4, dim=1)
                F.scaled_dot_product_attention(q, k, k, is_causal=True, **({"enable_gqa": True} if gqa else {}))
            torch.cuda.synchronize()
            return gqa, [SDPBackend.FLASH_ATTENTION]
        except (RuntimeError, TypeError):
            continue
    names = ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "MATH")  # PyTorch's own order
    return False, [getattr(SDPBackend, n) for n in names if hasattr(SDPBackend, n)]


def run_config(torch, name, seq_len, micro_batch, out_dir, timed_steps, gqa_in_sdpa, backends):
    from torch.nn.attention import sdpa_kernel
    F = torch.nn.functional
    torch.manual_seed(2026)
    torch.cuda.reset_peak_memory_stats()
    Model = build_model(torch, LLAMA_3_2_1B, seq_len, gqa_in_sdpa)
    model = Model().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=8e-4, weight_decay=0.1, fused=True)
    vocab = LLAMA_3_2_1B["vocab"]
    tokens = torch.randint(0, vocab, (micro_batch, seq_len + 1), device="cuda")
    inputs, labels = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    def step():
        with sdpa_kernel(backends), torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(inputs)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    for _ in range(5):
        loss = step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    step_ms = []
    for _ in range(timed_steps):
        start.record()
        loss = step()
        end.record()
        end.synchronize()
        step_ms.append(start.elapsed_time(end))
    wall = time.perf_counter()
    for _ in range(timed_steps):
        loss = step()
    torch.cuda.synchronize()
    back_to_back_ms = (time.perf_counter() - wall) * 1e3 / timed_steps

    from torch.profiler import ProfilerActivity, profile, schedule
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=3)) as prof:
        for _ in range(4):
            loss = step()
            prof.step()
    torch.cuda.synchronize()
    trace = out_dir / f"{name}.json"
    prof.export_chrome_trace(str(trace))
    events = json.loads(trace.read_text()).get("traceEvents", [])
    attention_kernels = sorted({e["name"] for e in events if e.get("cat") == "kernel" and
                                any(w in e["name"].lower() for w in ("flash", "fmha", "attn", "attention"))})
    params = sum(p.numel() for p in model.parameters())
    result = {
        "seq_len": seq_len, "micro_batch": micro_batch, "parameters": params,
        "step_ms_median": statistics.median(step_ms), "step_ms_min": min(step_ms), "step_ms": step_ms,
        "back_to_back_step_ms": back_to_back_ms,
        "peak_memory_bytes": torch.cuda.max_memory_allocated(),
        "loss": float(loss), "gqa_in_sdpa": gqa_in_sdpa,
        "sdpa_backends": [b.name for b in backends], "attention_kernels": attention_kernels,
        "trace": trace.name, "trace_bytes": trace.stat().st_size,
    }
    del model, optimizer
    torch.cuda.empty_cache()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--config", action="append", choices=sorted(CONFIGS))
    parser.add_argument("--steps", type=int, default=10, help="timed steps per configuration")
    args = parser.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("train_step: no CUDA device", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    attention = sdpa_backend(torch)  # (gqa_in_sdpa, backends): one probe serves every configuration
    summary = {
        "model": "llama-3.2-1b architecture", "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "configs": {},
    }
    status = 0
    for name in args.config or list(CONFIGS):
        seq_len, micro_batch = CONFIGS[name]
        try:
            result = run_config(torch, name, seq_len, micro_batch, args.out, args.steps, *attention)
            summary["configs"][name] = result
            tokens = seq_len * micro_batch
            flops = 6 * result["parameters"] * tokens
            print(f"{name}: step {result['step_ms_median']:.2f} ms (back to back {result['back_to_back_step_ms']:.2f}),"
                  f" {tokens / result['step_ms_median'] * 1e3:,.0f} tokens/s,"
                  f" {flops / result['step_ms_median'] / 1e9:.0f} TFLOP/s by 6ND,"
                  f" peak {result['peak_memory_bytes'] / 2**30:.1f} GiB, attention {result['attention_kernels']}",
                  flush=True)
        except Exception as error:  # one configuration failing leaves the others measured
            summary["configs"][name] = {"error": repr(error), "traceback": traceback.format_exc()}
            print(f"{name}: FAILED {error!r}", file=sys.stderr, flush=True)
            status = 1
            torch.cuda.empty_cache()
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
