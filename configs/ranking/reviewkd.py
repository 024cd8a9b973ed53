# ReviewKD on the ranking benchmark (a feature method of the 3D paper's Table B.1): ABF fusion of
# the four stages and HCL, mdistiller's settings (methods/reviewkd.py); its warm-up (20 of
# mdistiller's 240 epochs) shortened to one epoch of the students' schedule, as on MultiDigits.
# Weight 1 kept on val (docs/benchmarks/ranking_search.md: x0.3 and x3 gained less).
_base_ = ['../_base_/ranking/pair.py', '../_base_/methods/reviewkd.py']
model = _base_.method
model.distill_losses.reviewkd.warmup_epochs = 1
