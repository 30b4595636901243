"""Arms as plain data: a twin (pdl, l2_prefetch) is a factor the model sees only where both values compete."""
import numpy as np

from kernels.config import KernelConfig
from kernels.space import l2_prefetch_twin, runtime_knobs
from tuner.arms import Arm, from_config
from tuner.features import FeatureMap

BASE = KernelConfig("sm90", "f32", "col", (64, 64, 64), schedule="pingpong", scheduler="persistent", pdl=True)
TWIN = l2_prefetch_twin(BASE)


def _arm(cfg):
    return from_config(cfg, runtime_knobs(cfg))[0]


def test_an_l2_prefetch_twin_is_a_factor_of_its_arms_and_old_records_stay_as_they_were():
    base, twin = _arm(BASE), _arm(TWIN)
    assert twin.l2_prefetch and not base.l2_prefetch and twin.pdl
    assert "l2_prefetch" not in base.to_dict()  # records written before the factor existed read back the same
    assert twin.to_dict()["l2_prefetch"] is True
    assert Arm.from_dict(twin.to_dict()) == twin and Arm.from_dict(base.to_dict()) == base


def test_the_model_tells_a_twin_from_its_base_only_when_both_are_candidates():
    base, twin = _arm(BASE), _arm(TWIN)
    alone = FeatureMap([base])
    assert all(f != "l2_prefetch" for f, _ in alone.vocab)  # the features of a set without twins are unchanged
    both = FeatureMap([base, twin])
    assert ("l2_prefetch", True) in both.index and ("l2_prefetch", False) in both.index
    assert not np.array_equal(both.onehot(base), both.onehot(twin))
    assert both.n_onehot == alone.n_onehot + 2  # its two values, nothing else


def test_a_capped_twin_is_told_from_the_uncapped_one():
    twin, capped = _arm(TWIN), _arm(l2_prefetch_twin(BASE, kb=64))
    assert capped.l2_prefetch and capped.l2_prefetch_kb == 64 and capped.to_dict()["l2_prefetch_kb"] == 64
    assert "l2_prefetch_kb" not in twin.to_dict() and Arm.from_dict(capped.to_dict()) == capped
    fm = FeatureMap([twin, capped])
    assert ("l2_prefetch_kb", 64) in fm.index and ("l2_prefetch", True) not in fm.index  # one value: no feature
    assert not np.array_equal(fm.onehot(twin), fm.onehot(capped))
