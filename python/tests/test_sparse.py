"""Sparse products from SciPy matrices, DeviceMatrix and DeviceVectors, against A @ X."""

import numpy as np
import pytest
import scipy.sparse as sp

import ziggurat
from conftest import require_fp64, tolerance


def random_matrix(m, n, density, dtype, seed=1, fmt="csr"):
    return sp.random(m, n, density, format=fmt, dtype=dtype, random_state=np.random.default_rng(seed))


def check_product(a, x, y):
    """y against A @ X in double, within the rounding bound of each row's sum."""
    a64 = sp.csr_matrix(a, dtype=np.float64)
    x64 = x.astype(np.float64)
    want = a64 @ x64
    longest = int(np.diff(a64.indptr).max(initial=0))
    bound = tolerance(y.dtype, longest) * (abs(a64) @ abs(x64))
    assert y.shape == want.shape
    assert np.all(np.abs(y - want) <= bound), f"max error {np.max(np.abs(y - want))}"


@pytest.mark.parametrize("fmt, block_size", [("csr", None), ("bsr", None), ("bsr", 3), ("dia", None)])
@pytest.mark.parametrize("k", [1, 4])
def test_products_match_scipy(context, dtype, fmt, block_size, k):
    a = random_matrix(83, 71, 0.08, dtype) if fmt != "dia" else sp.diags(
        [np.arange(1, 84), np.ones(82), -np.ones(80)], [0, 1, -3], shape=(83, 83), dtype=dtype)
    x = np.random.default_rng(2).uniform(-1, 1, (a.shape[1], k) if k > 1 else a.shape[1]).astype(dtype)
    y = ziggurat.spmm(a, x, format=fmt, block_size=block_size, context=context)
    assert y.dtype == dtype
    check_product(a, x, y)


def test_every_scipy_format_and_index_type_is_taken(context):
    require_fp64(context)
    a = random_matrix(40, 30, 0.2, np.float64)
    x = np.random.default_rng(3).uniform(-1, 1, (30, 2))
    wide = a.copy()
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    for given in (a, a.tocoo(), a.tocsc(), a.tolil(), a.todia(), sp.csr_array(a), wide,
                  sp.bsr_matrix(random_matrix(40, 30, 0.2, np.float64, seed=4).toarray(), blocksize=(2, 2))):
        check_product(given, x, ziggurat.spmm(given, x, context=context))


def test_unsorted_indices_and_duplicates_are_summed_on_a_copy(context):
    require_fp64(context)
    indptr, indices, data = np.array([0, 3, 4]), np.array([2, 0, 2, 1]), np.array([1.0, 2.0, 3.0, 4.0])
    a = sp.csr_matrix((data, indices, indptr), shape=(2, 3))
    y = ziggurat.spmm(a, np.array([1.0, 10.0, 100.0]), context=context)
    np.testing.assert_array_equal(y, [402.0, 40.0])
    np.testing.assert_array_equal(a.indices, [2, 0, 2, 1])  # the caller's matrix is untouched


def test_dtypes_follow_the_operands(context):
    a = random_matrix(20, 20, 0.3, np.float32)
    assert ziggurat.spmm(a, np.ones(20, np.float32), context=context).dtype == np.float32
    require_fp64(context)
    assert ziggurat.spmm(a, np.ones(20, np.int64), context=context).dtype == np.float64
    with pytest.raises(ziggurat.InvalidArgument, match="complex"):
        ziggurat.spmm(a, np.ones(20, np.complex128), context=context)


def test_fortran_ordered_and_strided_vectors(context):
    require_fp64(context)
    a = random_matrix(50, 40, 0.1, np.float64)
    x = np.random.default_rng(5).uniform(-1, 1, (40, 3))
    want = ziggurat.spmm(a, x, context=context)
    strided = np.zeros((80, 6))[::2, ::2]
    strided[...] = x
    for given in (np.asfortranarray(x), strided):
        assert ziggurat.spmm(a, given, context=context).tobytes() == want.tobytes()


def test_a_device_matrix_stays_on_the_device(context):
    require_fp64(context)
    a = random_matrix(60, 60, 0.1, np.float64)
    matrix = ziggurat.DeviceMatrix(a, context=context)
    x = np.random.default_rng(6).uniform(-1, 1, (60, 2))
    want = a @ x
    a.data[:] = 0  # the device holds its own copy: products do not read A again
    y = matrix @ x
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    assert matrix.shape == (60, 60) and matrix.dtype == np.float64 and matrix.format == "bsr"


def test_device_vectors_stay_on_the_device_and_download_in_place(context, dtype):
    a = random_matrix(64, 64, 0.05, dtype) + sp.identity(64, dtype=dtype, format="csr")
    matrix = ziggurat.DeviceMatrix(a, format="csr", kernel="row", context=context)
    x0 = np.random.default_rng(7).uniform(-1, 1, (64, 3)).astype(dtype)
    x, y = matrix.input_vectors(x0), matrix.output_vectors(3)
    assert x.shape == y.shape == (64, 3) and x.dtype == dtype
    want = x0
    for _ in range(3):  # x <- A x, on the device, by swapping the roles of the two sets
        matrix.multiply(x, out=y)
        x, y = y, x
        want = a @ want
    out = np.empty((64, 3), dtype)
    result = x.download(out=out)
    assert result is out  # written in place: no copy of the result
    np.testing.assert_allclose(out, want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5)
    assert matrix.info["kernels"] == {3: "row"}  # kernels built once, for k = 3


@pytest.mark.parametrize("fmt", ["csr", "bsr", "dia"])
def test_one_vector_gives_the_bits_of_resident_vectors(context, dtype, fmt):
    # On a CPU device `matrix @ x` with one vector runs on x and the result in place, with no copy;
    # elsewhere it copies. Either way: the bits of the same kernel on uploaded vectors, x untouched.
    a = random_matrix(300, 300, 0.03, dtype) if fmt != "dia" else sp.diags(
        [np.arange(1, 301), np.ones(299), -np.ones(297)], [0, 1, -3], shape=(300, 300), dtype=dtype)
    matrix = ziggurat.DeviceMatrix(a, format=fmt, context=context)
    x0 = np.random.default_rng(8).uniform(-1, 1, 300).astype(dtype)
    resident = matrix.output_vectors(1)
    matrix.multiply(matrix.input_vectors(x0.reshape(300, 1)), out=resident)
    want = resident.download()[:, 0]
    frozen = x0.copy()
    frozen.flags.writeable = False
    strided = np.zeros(600, dtype)[::2]
    strided[...] = x0
    results = [matrix @ given for given in (x0, frozen, strided, x0)]
    for y in results:
        assert y.tobytes() == want.tobytes()
    assert results[0] is not results[3] and x0.tobytes() == frozen.tobytes()
    assert (matrix @ x0.reshape(300, 1)).tobytes() == want.tobytes()


def test_an_upload_takes_exactly_the_vectors_shape(context):
    matrix = ziggurat.DeviceMatrix(random_matrix(10, 10, 0.3, np.float32), context=context)
    vectors = matrix.input_vectors(1)
    for wrong in (np.arange(3, dtype=np.float32), np.ones(11, np.float32), np.ones((10, 2), np.float32),
                  np.ones((5, 2), np.float32)):
        with pytest.raises(ziggurat.InvalidArgument, match=r"shape \(10, 1\) or \(10,\), not \(" + str(wrong.shape[0])):
            vectors.upload(wrong)
    vectors.upload(np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal(vectors.download()[:, 0], np.arange(10))
    with pytest.raises(ziggurat.InvalidArgument, match=r"shape \(10, 2\), not \(10,\)"):
        matrix.input_vectors(2).upload(np.ones(10, np.float32))


def test_the_autotuned_kernel_is_named_and_right(context):
    a = random_matrix(200, 150, 0.05, np.float32)
    x = np.random.default_rng(8).uniform(-1, 1, (150, 2)).astype(np.float32)
    matrix = ziggurat.DeviceMatrix(a, block_size=1, kernel="auto", context=context)
    check_product(a, x, matrix @ x)
    assert matrix.info["kernels"][2].split("/")[0] in ("row", "group", "multirow")


def test_solver_results_are_handed_over_without_a_copy(context):
    require_fp64(context)
    a = sp.diags([4.0, -1.0, -1.0], [0, 1, -1], shape=(30, 30), format="csr")
    x, _ = ziggurat.solve(a, np.ones(30), preconditioner="jacobi", context=context)
    assert not x.flags.owndata and type(x.base).__name__ == "PyCapsule"  # NumPy holds the solver's own array


def test_errors_name_what_is_wrong(context):
    a = random_matrix(10, 8, 0.3, np.float32)
    matrix = ziggurat.DeviceMatrix(a, context=context)
    with pytest.raises(ziggurat.InvalidArgument, match=r"shape \(8,\)"):
        matrix @ np.ones(9, np.float32)
    with pytest.raises(ziggurat.InvalidArgument, match="scipy.sparse"):
        ziggurat.spmm(np.eye(3), np.ones(3), context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="format"):
        ziggurat.DeviceMatrix(a, format="ell", context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="1 to 16|block"):
        ziggurat.DeviceMatrix(a, block_size=17, context=context)
    with pytest.raises(ziggurat.OutOfDeviceMemory):
        matrix.output_vectors(1 << 40)
    require_fp64(context)
    with pytest.raises(ziggurat.InvalidArgument, match="float64"):
        matrix.multiply(ziggurat.DeviceMatrix(a, dtype=np.float64, context=context).input_vectors(1),
                        matrix.output_vectors(1))


def corrupted(fmt, fault):
    """A 6 x 5 SciPy matrix of format `fmt` whose arrays are then made inconsistent by `fault`."""
    a = sp.csr_matrix(np.arange(30, dtype=np.float64).reshape(6, 5) % 4)
    a = a.tobsr(blocksize=(1, 1)) if fmt == "bsr" else a.asformat(fmt)
    fault(a)
    return a


def decreasing(a):
    a.indptr[2], a.indptr[3] = a.indptr[3], a.indptr[2]


def past_the_end(a):
    a.indptr[-1] += 50


def index_outside(a):
    a.indices[0] = 77


def row_outside(a):
    a.row[0] = -4


@pytest.mark.parametrize("fmt, fault, problem", [
    ("csr", decreasing, "indptr decreases"), ("csr", past_the_end, "indptr"), ("csr", index_outside, "outside"),
    ("csc", decreasing, "indptr decreases"), ("bsr", index_outside, "outside"), ("coo", row_outside, "row")])
def test_a_corrupt_scipy_matrix_is_refused_before_scipy_reads_it(context, fmt, fault, problem):
    a = corrupted(fmt, fault)
    for call in (lambda: ziggurat.DeviceMatrix(a, context=context), lambda: ziggurat.spmm(a, np.ones(5), context=context),
                 lambda: ziggurat.solve(a, np.ones(6), context=context)):
        with pytest.raises(ziggurat.InvalidArgument, match=f"corrupt.*{problem}"):
            call()
