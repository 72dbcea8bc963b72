"""Calls from several Python threads: device work runs one call at a time, with the same results."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import ziggurat
from conftest import device_nbytes


def test_threads_get_the_results_of_calls_made_one_at_a_time(context, profile):
    a = sp.random(300, 300, 0.05, format="csr", dtype=np.float32, random_state=np.random.default_rng(1))
    matrix = ziggurat.DeviceMatrix(a, context=context)
    xs = [np.random.default_rng(seed).uniform(-1, 1, (300, 1 + seed % 3)).astype(np.float32) for seed in range(8)]
    u0 = np.random.default_rng(9).uniform(-1, 1, (48, 40)).astype(np.float32)

    def work(x):
        vectors = matrix.input_vectors(x)
        out = matrix.output_vectors(x.shape[1])
        matrix.multiply(vectors, out)
        field, _ = ziggurat.heat(u0, 6, mode="strip", height=2, device_memory=3 * device_nbytes(context, u0), context=context,
                                 profile=profile)
        return matrix @ x, out.download(), field, matrix.info["kernels"]

    alone = [work(x) for x in xs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(work, xs))
    for (y, z, field, _), (y2, z2, field2, kernels) in zip(alone, together):
        assert y.tobytes() == y2.tobytes() and z.tobytes() == z2.tobytes() and field.tobytes() == field2.tobytes()
        assert set(kernels) == {1, 2, 3}


def test_device_work_inside_a_progress_callback_is_refused_not_a_deadlock(context, profile):
    def finish(_):
        context.finish()

    with pytest.raises(ziggurat.InvalidArgument, match="progress callback"):
        ziggurat.heat(np.zeros((60, 50), np.float32), 6, mode="strip", height=3, device_memory="16KiB",
                      progress=finish, context=context, profile=profile)
