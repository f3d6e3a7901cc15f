# MGMark-style workloads km, transpose, conv (benchmarks/*.hip: built by the
# generic `programs` rules, no extra host libraries) and the case study.
#   make case-study   docs/case-study.svg + table from benchmarks/results/latest.json
#                     (run `make bench` first, or benchmarks/case-study.sh --run)
.PHONY: case-study
case-study:
	BUILD=$(BUILD) bash benchmarks/case-study.sh
