# Tests of what grip ships beside the plugin: the installed package (tests/cli/install.sh, registered with the other
# cli tests, needs the build folder to install from) and the Python package (python/tests, run by pytest).
set_property(TEST cli_install APPEND PROPERTY ENVIRONMENT
             "GRIP_BUILD_DIR=${CMAKE_BINARY_DIR};CMAKE_COMMAND=${CMAKE_COMMAND}")

# The Python that runs python/tests: GRIP_PYTHON if set, else the first of the system's python3 (where Debian's
# python3-numpy and python3-pytest go) and the python3 on PATH (which may be a pyenv or venv build without them) that
# has numpy and pytest. With none, the test runs anyway and skips (exit 77), saying what is missing.
set(GRIP_PYTHON "" CACHE FILEPATH "Python interpreter with numpy and pytest for python/tests (empty: search)")
if(NOT GRIP_PYTHON)
  find_program(GRIP_SYSTEM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  find_program(GRIP_PATH_PYTHON NAMES python3)
  set(grip_pythons)
  foreach(found GRIP_SYSTEM_PYTHON GRIP_PATH_PYTHON)
    if(${found})
      list(APPEND grip_pythons ${${found}})
    endif()
  endforeach()
  foreach(py ${grip_pythons})
    execute_process(COMMAND ${py} -c "import numpy, pytest" RESULT_VARIABLE grip_py_rc OUTPUT_QUIET ERROR_QUIET)
    if(grip_py_rc EQUAL 0)
      set(grip_python ${py})
      break()
    endif()
  endforeach()
  if(NOT grip_python AND grip_pythons)
    list(GET grip_pythons 0 grip_python)
  endif()
else()
  set(grip_python ${GRIP_PYTHON})
endif()
message(STATUS "grip: python tests run with ${grip_python}")

if(grip_python)
  add_test(NAME python_pytest COMMAND ${grip_python} ${CMAKE_SOURCE_DIR}/python/tests/run_pytest.py)
else()
  add_test(NAME python_pytest COMMAND sh -c "echo 'skipped: no python3 found'; exit 77")
endif()
# PYTHONPATH: the package under test comes from the source tree, whatever is installed
set_tests_properties(python_pytest PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT
  "GRIP_PLUGIN=$<TARGET_FILE:grip>;GRIP_HOST=$<TARGET_FILE:grip-host>;GRIP_DATA=${GRIP_DATA_DIR};\
PYTHONPATH=${CMAKE_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
# tests/cli/tutorial_mm.sh writes its scaled PCDs with numpy, through the same interpreter
if(grip_python)
  set_property(TEST cli_tutorial_mm APPEND PROPERTY ENVIRONMENT "GRIP_PYTHON=${grip_python}")
endif()
