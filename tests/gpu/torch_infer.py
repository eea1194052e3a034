"""A small PyTorch inference loop (fp16 linear layer, 50 batches): the
inference-style workload of the policy GPU script."""
import torch

m = torch.nn.Linear(8192, 8192).cuda().half().eval()
with torch.inference_mode():
    for _ in range(50):
        y = m(torch.randn(64, 8192, device="cuda", dtype=torch.half))
torch.cuda.synchronize()
print("infer ok", torch.cuda.mem_get_info())
