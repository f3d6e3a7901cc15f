# mk/sweep.mk - configuration sweeps over MPI ranks (replay/sweep_mpi.c,
# docs/sweeps.md). When mpicc is found, sweep_mpi.o is compiled with its flags
# and RP_HAVE_MPI=1 and mgpu-replay links libmpi (added as a prerequisite so
# that it lands in the link line's $^ after librp.a; a command-line LDLIBS,
# as in `make asan`, does not drop it). Without mpicc, sweep_mpi.c builds
# without MPI and mgpu-replay refuses to run under mpirun with a message.
SWEEP_MPICC      ?= mpicc
SWEEP_MPI_CFLAGS := $(shell $(SWEEP_MPICC) --showme:compile 2>/dev/null)
SWEEP_MPI_LIB    := $(firstword $(wildcard $(addsuffix /libmpi.so,$(shell $(SWEEP_MPICC) --showme:libdirs 2>/dev/null))))

ifneq ($(and $(SWEEP_MPI_CFLAGS),$(SWEEP_MPI_LIB)),)
$(BUILD)/obj/replay/sweep_mpi.o: ALL_CFLAGS += $(SWEEP_MPI_CFLAGS) -DRP_HAVE_MPI=1
$(REPLAY): $(SWEEP_MPI_LIB)
endif
