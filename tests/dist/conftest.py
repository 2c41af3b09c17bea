"""The ``mpi`` fixture: tests that launch MPI jobs skip only where MPI cannot start."""
import pytest

from mpirun import require_mpi


@pytest.fixture(scope="session")
def mpi():
    """Skip unless 2-rank MPI jobs run on this machine (see ``mpirun.mpi_unavailable``)."""
    require_mpi()
