"""A small PyTorch training loop (MLP, AdamW, 20 steps): the training-style
workload of the policy and final-check GPU scripts."""
import torch

m = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.AdamW(m.parameters())
for _ in range(20):
    x = torch.randn(256, 4096, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    loss = torch.nn.functional.cross_entropy(m(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("train ok", float(loss.detach()))
