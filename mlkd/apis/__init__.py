"""What the tools call: train or evaluate a run, fill a teacher cache, run a benchmark or a sweep,
collect results (mmpretrain's ``apis``). Library code under ``mlkd`` never imports this package."""
