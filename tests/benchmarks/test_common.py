"""mlkd.benchmarks.common: the variants are timed round-robin with the clock given, warm-up rounds
untimed, one median per variant; the timed networks and methods come without downloads."""

from mlkd.benchmarks.common import CRD_SAMPLES, method_cfg, net_cfg, timed_interleaved


def test_steps_run_round_robin_and_report_medians_of_the_timed_rounds():
    calls = []
    now = [0.0]
    cost = {'a': [100.0, 1.0, 3.0, 2.0], 'b': [50.0, 5.0, 4.0, 6.0]}  # per call, in call order

    def step(name):
        def run():
            now[0] += cost[name][sum(c == name for c in calls)]
            calls.append(name)

        return run

    medians = timed_interleaved(
        {'a': step('a'), 'b': step('b')}, repeats=3, device='cpu', warmup=1, clock=lambda: now[0]
    )
    assert calls == ['a', 'b'] * 4  # interleaved, not a a a a b b b b
    assert medians == {'a': 2.0, 'b': 5.0}  # warm-up costs (100, 50) left out


def test_timed_networks_load_no_weights_and_crd_gets_a_small_bank():
    assert 'init_cfg' not in net_cfg('resnet18')['backbone']
    assert method_cfg('crd')['distill_losses']['crd']['num_samples'] == CRD_SAMPLES
