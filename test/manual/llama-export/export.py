"""A Llama-architecture decoder (transformers' own LlamaForCausalLM: RoPE, RMSNorm, grouped-query
attention) with random weights, exported in the layout Hugging Face Optimum gives decoders with a KV
cache, plus transformers' own greedy continuations of three prompts as the reference. Run by run.sh.
  python3 export.py <vocab size> <out dir>
"""
import os
import json, torch, sys
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache
torch.manual_seed(0)
V = int(sys.argv[1])
os.chdir(sys.argv[2])
cfg = LlamaConfig(vocab_size=V, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, attn_implementation="eager", tie_word_embeddings=False)
model = LlamaForCausalLM(cfg).eval()
with torch.no_grad():
    model.lm_head.weight.mul_(8.0)  # clear greedy margins
L, KV, D = 2, 2, 16
class Wrapper(torch.nn.Module):
    def __init__(self, m): super().__init__(); self.m = m
    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache()
        for l in range(L): cache.update(past[2*l], past[2*l+1], l)
        out = self.m(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, past_key_values=cache, use_cache=True)
        pkv = out.past_key_values
        res = [out.logits]
        for l in range(L):
            layer = pkv.layers[l] if hasattr(pkv, "layers") else None
            k = layer.keys if layer is not None else pkv.key_cache[l]
            v = layer.values if layer is not None else pkv.value_cache[l]
            res += [k, v]
        return tuple(res)
w = Wrapper(model)
B, S, P = 2, 3, 4
ids = torch.randint(0, V, (B, S)); mask = torch.ones(B, P + S, dtype=torch.long); pos = torch.arange(P, P + S).unsqueeze(0).repeat(B, 1)
past = [torch.randn(B, KV, P, D) for _ in range(2 * L)]
inames = ["input_ids", "attention_mask", "position_ids"] + [f"past_key_values.{l}.{p}" for l in range(L) for p in ("key", "value")]
onames = ["logits"] + [f"present.{l}.{p}" for l in range(L) for p in ("key", "value")]
dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"}, "attention_mask": {0: "batch_size", 1: "total_sequence_length"}, "position_ids": {0: "batch_size", 1: "sequence_length"}, "logits": {0: "batch_size", 1: "sequence_length"}}
for l in range(L):
    for p in ("key", "value"):
        dyn[f"past_key_values.{l}.{p}"] = {0: "batch_size", 2: "past_sequence_length"}
        dyn[f"present.{l}.{p}"] = {0: "batch_size", 2: "total_sequence_length"}
torch.onnx.export(w, (ids, mask, pos, *past), "model.onnx", input_names=inames, output_names=onames, dynamic_axes=dyn, opset_version=17, dynamo=False)
cfg.to_json_file("config.json")
# Greedy references by transformers itself (no cache, whole sequence each step).
prompts = [[72, 101, 108, 108, 111], [84, 104, 101, 32, 99, 97, 112, 105, 116, 97, 108], [65]]
refs = []
with torch.no_grad():
    for p in prompts:
        seq = list(p)
        for _ in range(12):
            logits = model(input_ids=torch.tensor([seq])).logits[0, -1]
            seq.append(int(logits.argmax()))
        refs.append(seq[len(p):])
json.dump({"prompts": prompts, "greedy": refs}, open("reference.json", "w"))
print("ok", refs)
