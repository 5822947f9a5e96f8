# Tests of what grip ships beside the plugin: the installed package (tests/cli/install.sh, registered with the other
# cli tests, needs the build folder to install from) and the Python package (python/tests, run by pytest).
set_property(TEST cli_install APPEND PROPERTY ENVIRONMENT
             "GRIP_BUILD_DIR=${CMAKE_BINARY_DIR};CMAKE_COMMAND=${CMAKE_COMMAND}")
