# Command-line tests of the example programs (included from examples/CMakeLists.txt): one
# test per exit code of the convention in examples/common/cli.hpp (0 ok, 1 run-time failure
# or failed check, 2 usage error, 77 no GPU) for each program, and one per message class
# (NaN/Inf options, not-an-integer, ranges, combinations, adjusted options, NaN results).
# Each runs one short command through tests/examples/expect_exit.cmake, which checks the
# exit code, a regular expression on the output, and that no number is printed with 17 or
# more digits. All together they take a few seconds.
set(_expect ${CMAKE_CURRENT_LIST_DIR}/expect_exit.cmake)

# adi_cli_test(<name> <exit code> <regex or ""> <target> <args>...)
function(adi_cli_test name code regex target)
  string(REPLACE ";" "|" _args "${ARGN}")
  add_test(NAME cli_${name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT=${code} "-DMATCH=${regex}" "-DCOMMAND=$<TARGET_FILE:${target}>|${_args}"
                   -P ${_expect})
  set_tests_properties(cli_${name} PROPERTIES TIMEOUT 120 LABELS cli ENVIRONMENT "OMP_NUM_THREADS=1")
  if(target MATCHES "_mpi$")
    # Open MPI 4 creates its session folder (/tmp/ompi.<host>.<uid>) without tolerating a second
    # process creating it at the same moment: two singletons started together by ctest -j can
    # fail in orte_init ("mkdir ... File exists"). Every test that starts Open MPI holds this lock.
    set_tests_properties(cli_${name} PROPERTIES RESOURCE_LOCK openmpi_session)
  endif()
endfunction()

set(_bad_dir /proc/adi_cannot_write_here)

# heat3d
adi_cli_test(heat3d_help 0 "Usage:.*--max-error" heat3d --help)
adi_cli_test(heat3d_dt_note 0 "note: --t-end 1 is not a whole number of --dt 0.3 steps: 4 steps of dt = 0.25" heat3d
             --n 5 --dt 0.3 --t-end 1 --no-output)
adi_cli_test(heat3d_dt_keeps_t_end 0 "steps      5, dt = 0.01, t_end = 0.05" heat3d --n 5 --dt 0.01 --no-output)
# The issue's run: dt = 1e308 overflows. Kernels that test their pivots stop at a singular
# system, the others leave NaN in u (216 of 512 with the host transpose kernel): exit 1 both ways.
adi_cli_test(heat3d_nan_result 1
             "heat3d: error: (u has [0-9]+ NaN/Inf values of 512 at step 1|the implicit system of step 1 is singular)"
             heat3d --n 8 --steps 1 --t-end 1e308 --max-error 1e-3 --no-output)
adi_cli_test(heat3d_max_error 1 "max error [0-9.e-]+ exceeds --max-error 1e-12" heat3d --n 9 --steps 2 --no-output
             --max-error 1e-12)
adi_cli_test(heat3d_nan_dt 2 "--dt: nan is not a finite number" heat3d --dt nan --no-output)
adi_cli_test(heat3d_nan_t_end 2 "--t-end: nan is not a finite number" heat3d --t-end nan --no-output)
adi_cli_test(heat3d_nan_theta 2 "--theta: nan is not a finite number" heat3d --theta nan --no-output)
adi_cli_test(heat3d_inf_kx 2 "--kx: inf is not a finite number" heat3d --kx inf --no-output)
adi_cli_test(heat3d_huge_dt 2 "--dt: 1e400 is not a finite number" heat3d --dt 1e400 --no-output)
adi_cli_test(heat3d_not_integer 2 "--n: 'abc' is not an integer" heat3d --n abc)
adi_cli_test(heat3d_exponent_integer 2 "--n: '1e3' is not an integer \\(write it as 1000\\)" heat3d --n 1e3)
adi_cli_test(heat3d_range 2 "--theta: 2 is not in \\(0, 1\\]" heat3d --theta 2 --no-output)
adi_cli_test(heat3d_positive 2 "--kx: 0 must be > 0" heat3d --kx 0 --no-output)
adi_cli_test(heat3d_three_times 2 "give at most two of --steps, --dt, --t-end" heat3d --n 5 --steps 5 --dt 0.1
             --t-end 1 --no-output)
adi_cli_test(heat3d_too_many_steps 2 "steps \\(at most 1e12\\)" heat3d --n 5 --dt 1e-300 --t-end 1e300 --no-output)
adi_cli_test(heat3d_too_big 2 "a grid of 1048576 x 1048576 x 1048576 nodes needs about [0-9.e+]+ GB" heat3d
             --n 1048576 --no-output)
if(ADI_WITH_VTK)  # without VTK the program writes no files and needs no folder
  adi_cli_test(heat3d_bad_output 2 "--output ${_bad_dir}: cannot create that folder" heat3d --n 5 --steps 1
               --output ${_bad_dir})
endif()
adi_cli_test(heat3d_two_nodes 2 "--ny 2: an axis has 1 node" heat3d --nx 3 --ny 2 --nz 1 --no-output)
adi_cli_test(heat3d_cfl_note 0 "note: dt = [0-9.e+]+ from --cfl is shortened to 0.05 \\(1 steps\\)" heat3d --n 5
             --cfl 1e300 --no-output)
adi_cli_test(heat3d_theta_peaceman_rachford 2 "--theta does not apply to --scheme peaceman-rachford" heat3d --nz 1
             --scheme peaceman-rachford --theta 0.7 --no-output)
adi_cli_test(heat3d_no_output_every 2 "--no-output excludes --every|--every excludes --no-output" heat3d --no-output
             --every 3)

# black_scholes
adi_cli_test(black_scholes_help 0 "Usage:.*--model" black_scholes --help)
adi_cli_test(black_scholes_max_error 1 "error [0-9.e-]+ exceeds --max-error 1e-12" black_scholes --nodes 41 --steps 10
             --no-output --max-error 1e-12)
adi_cli_test(black_scholes_heston_assets 2 "--assets applies to --model bs only" black_scholes --model heston
             --assets 2 --no-output)
adi_cli_test(black_scholes_bs_heston_option 2 "--kappa applies to --model heston only" black_scholes --kappa 2
             --no-output)
adi_cli_test(black_scholes_nan_rate 2 "--rate: nan is not a finite number" black_scholes --rate nan --no-output)
adi_cli_test(black_scholes_huge_vol 2 "--vol: 1e308 is not in \\[0, 10\\]" black_scholes --vol 1e308 --no-output)
adi_cli_test(black_scholes_far_field 2 "puts the far field at e\\^[0-9.e+]+ times the spot" black_scholes --vol 5
             --maturity 100 --no-output)
adi_cli_test(black_scholes_corr_typed 2 "--corr: -1.0000001 is not in \\[-1, 1\\]" black_scholes --assets 2
             --corr -1.0000001 --no-output)
adi_cli_test(black_scholes_max_error_no_closed_form 2 "--max-error needs a contract with a closed form" black_scholes
             --assets 2 --payoff best-of --no-output --max-error 1e-3)
adi_cli_test(black_scholes_american_scheme 2 "--scheme applies to --exercise european" black_scholes
             --exercise american --type put --scheme douglas --no-output)
adi_cli_test(black_scholes_too_big 2 "nodes \\(--nodes\\) needs about [0-9.e+]+ GB" black_scholes --assets 3
             --nodes 1000000 --no-output)
adi_cli_test(black_scholes_library_message 2 "black_scholes: error: the correlation matrix .* is not positive"
             black_scholes --assets 3 --corr 0.9,0.9,-0.9 --no-output)
if(ADI_WITH_VTK)  # without VTK the program writes no files and needs no folder
  adi_cli_test(black_scholes_bad_output 2 "cannot create that folder" black_scholes --output ${_bad_dir})
endif()

# euler_vortex
adi_cli_test(euler_vortex_help 0 "Usage:.*--vortex-axis" euler_vortex --help)
adi_cli_test(euler_vortex_drift_3d 0 "rho\\*w: total ~0, absolute drift per point" euler_vortex --dims 3 --n 8
             --steps 2 --threads 1 --no-output)
adi_cli_test(euler_vortex_max_error 1 "max density error [0-9.e-]+ exceeds --max-error 1e-12" euler_vortex --n 16
             --steps 2 --threads 1 --no-output --max-error 1e-12)
adi_cli_test(euler_vortex_singular 1 "the implicit block system became singular at step [0-9]+" euler_vortex --beta 8
             --n 16 --threads 1 --no-output)
adi_cli_test(euler_vortex_nan_cfl 2 "--cfl: nan is not a finite number" euler_vortex --cfl nan --no-output)
adi_cli_test(euler_vortex_axis_2d 2 "--vortex-axis needs --dims 3" euler_vortex --vortex-axis x --no-output)
adi_cli_test(euler_vortex_verify_cpu 2 "--verify-cpu compares a --backend cuda run with the CPU" euler_vortex
             --verify-cpu --no-output)
adi_cli_test(euler_vortex_too_big 2 "points needs about [0-9.e+]+ GB" euler_vortex --n 1000000 --no-output)
if(ADI_WITH_VTK)  # without VTK the program writes no files and needs no folder
  adi_cli_test(euler_vortex_bad_output 2 "cannot create that folder" euler_vortex --n 8 --output ${_bad_dir})
endif()

# neuron
adi_cli_test(neuron_help 0 "Usage:.*--nseg-rule" neuron --help)
adi_cli_test(neuron_t_end_note 0 "note: --t-end 1 is not a whole number of --dt 0.3 steps: 3 steps, ending at 0.9 ms"
             neuron --class big-high --neurons 1 --dt 0.3 --t-end 1 --no-output)
adi_cli_test(neuron_nan_result 1 "voltage of neuron 0 has [0-9]+ NaN/Inf value" neuron --class big-high --neurons 1
             --t-end 1 --delay 0 --amp 1e308 --no-output)
adi_cli_test(neuron_nseg_without_fixed 2 "--nseg needs --nseg-rule fixed" neuron --nseg 5 --no-output)
adi_cli_test(neuron_nan_amp 2 "--amp: nan is not a finite number" neuron --amp nan --no-output)
adi_cli_test(neuron_bad_output 2 "cannot create that folder" neuron --t-end 1 --output ${_bad_dir})

# option_chain: a bad row named by its CSV line, a header row and a row of its own output read
# back (the last four columns ignored; the second row, sigma 0.6 over 30 years, 5.0888 closed form).
set(_oc ${PROJECT_SOURCE_DIR}/examples/option_chain)
adi_cli_test(option_chain_help 0 "Usage:.*--input" option_chain --help)
adi_cli_test(option_chain_bad_nodes 2 "option_chain: error: --nodes: 'abc' is not an integer" option_chain --input
             ${_oc}/chain.csv --nodes abc)
adi_cli_test(option_chain_bad_row 2 "error: line 2 of .*bad_chain.csv: Contract: maturity = -1 must be > 0" option_chain
             --input ${_oc}/bad_chain.csv)
adi_cli_test(option_chain_no_input 2 "--input: cannot open" option_chain --input ${_bad_dir}/chain.csv)
adi_cli_test(option_chain_bad_output 2 "--output: cannot write" option_chain --input ${_oc}/chain.csv --output
             ${_bad_dir}/prices.csv)
adi_cli_test(option_chain_own_output 0 "put,american,100,100,1,0.2,0.05,0,6.08[0-9]*,-0.41[0-9]*,0.02[0-9]*,-2.2[0-9]*.call,european,100,100,30,0.6,-0.05,0.08,5.08[0-9]*,"
             option_chain --input ${_oc}/output_chain.csv --print)

# scripts/demo.sh --help prints its help and nothing else: no install, configure, build or run.
add_test(NAME cli_demo_help
         COMMAND ${CMAKE_COMMAND} -DEXPECT=0 "-DMATCH=Usage: scripts/demo.sh"
                 "-DNOT_MATCH=install_deps|Configuring|Open .*pvd" "-DCOMMAND=${PROJECT_SOURCE_DIR}/scripts/demo.sh|--help"
                 -P ${_expect})
set_tests_properties(cli_demo_help PROPERTIES TIMEOUT 60 LABELS cli)

# MPI programs, one rank started without mpiexec (MPI singleton)
if(TARGET heat3d_mpi)
  adi_cli_test(heat3d_mpi_help 0 "Usage:" heat3d_mpi --help)
  # The distributed kernels meet the overflow as a zero pivot, the serial ones as NaN in u: exit 1 either way.
  adi_cli_test(heat3d_mpi_overflow 1
               "heat3d_mpi: error: (u has [0-9]+ NaN/Inf values of 512|the implicit system of step 1 is singular)"
               heat3d_mpi --n 8 --steps 1 --t-end 1e308 --no-output --threads 1)
  adi_cli_test(heat3d_mpi_nan_dt 2 "--dt: nan is not a finite number" heat3d_mpi --dt nan --no-output)
  if(ADI_WITH_VTK)  # without VTK the program writes no files and needs no folder
    adi_cli_test(heat3d_mpi_bad_output 2 "cannot create that folder" heat3d_mpi --n 5 --output ${_bad_dir})
  endif()
endif()
if(TARGET euler_vortex_mpi)
  adi_cli_test(euler_vortex_mpi_help 0 "Usage:" euler_vortex_mpi --help)
  adi_cli_test(euler_vortex_mpi_drift_3d 0 "rho\\*w: total ~0, absolute drift per point" euler_vortex_mpi --dims 3
               --n 8 --steps 2 --threads 1)
  adi_cli_test(euler_vortex_mpi_max_error 1 "max density error [0-9.e-]+ exceeds --max-error 1e-12" euler_vortex_mpi
               --n 16 --steps 2 --threads 1 --max-error 1e-12)
  adi_cli_test(euler_vortex_mpi_negative_max_error 2 "--max-error: -1 must be > 0" euler_vortex_mpi --max-error -1)
  adi_cli_test(euler_vortex_mpi_nz_2d 2 "--nz needs --dims 3" euler_vortex_mpi --nz 9)
  if(ADI_WITH_VTK)
    adi_cli_test(euler_vortex_mpi_output 0 "euler_vortex.pvd \\(3 frames" euler_vortex_mpi --n 12 --steps 4 --every 2
                 --threads 1 --output ${CMAKE_CURRENT_BINARY_DIR}/euler_vortex_mpi_test_out)
  endif()
endif()

# 77: a GPU-only request in a build without CUDA (with CUDA, these requests run).
if(NOT ADI_WITH_CUDA)
  set(_gpu "this build has no CUDA \\(rebuild with -DADI_WITH_CUDA=ON\\): use --backend cpu")
  adi_cli_test(heat3d_no_gpu 77 "${_gpu}" heat3d --n 5 --backend cuda --no-output)
  adi_cli_test(black_scholes_no_gpu 77 "${_gpu}" black_scholes --backend cuda --no-output)
  adi_cli_test(euler_vortex_no_gpu 77 "${_gpu}" euler_vortex --backend cuda --no-output)
  adi_cli_test(option_chain_no_gpu 77 "${_gpu}" option_chain --input ${_oc}/chain.csv --backend cuda)
  adi_cli_test(neuron_no_gpu 77 "${_gpu}" neuron --backend cuda --no-output)
  adi_cli_test(neuron_active_no_gpu 77 "${_gpu}" neuron --active --backend cuda --no-output)
  if(TARGET heat3d_mpi)
    adi_cli_test(heat3d_mpi_no_gpu 77 "--memory device: .*use --memory host" heat3d_mpi --n 5 --memory device
                 --no-output)
  endif()
endif()

# ParaView reads every example's output (names, sizes, finite values of the arrays), with
# ParaView's own readers under pvpython; skipped (exit 77, shown as "Skipped" by CTest,
# never as passed) without pvpython: scripts/install_deps.sh --with-paraview.
if(ADI_WITH_VTK)
  find_program(ADI_PVPYTHON pvpython PATHS /opt/python3-paraview/usr/bin)
  set(_mpiexec "")
  if(TARGET heat3d_mpi AND TARGET euler_vortex_mpi AND MPIEXEC_EXECUTABLE)
    set(_mpiexec ${MPIEXEC_EXECUTABLE})
  endif()
  add_test(NAME paraview_outputs
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/paraview_outputs.sh ${ADI_PVPYTHON} ${CMAKE_BINARY_DIR}/paraview_outputs
                   ${CMAKE_BINARY_DIR}/examples ${_mpiexec})
  set_tests_properties(paraview_outputs PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS paraview)
endif()
