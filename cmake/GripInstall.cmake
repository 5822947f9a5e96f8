# The install layout (paths relative to the prefix; lib/ may be lib64/ or lib/<multiarch>/, see GripInstallDirs):
#   include/grip/plugin.h            the whole ABI; hosts write #include <grip/plugin.h>
#   lib/grip/libgrip.so              the plugin, in a folder of its own that hosts search
#   bin/grip-host                    the example host; finds ../lib/grip/libgrip.so by itself
#   lib/pkgconfig/grip.pc            Cflags for the header, Libs -ldl, variables plugindir and plugin
#   lib/cmake/grip/gripConfig.cmake  target grip::plugin_headers, GRIP_PLUGIN_DIR, GRIP_PLUGIN_PATH (+ version file)
# Nothing links libgrip.so: hosts dlopen() it, so the packages give its path, not a library to link.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/GripInstallDirs.cmake)
include(CMakePackageConfigHelpers)

install(TARGETS grip LIBRARY DESTINATION ${GRIP_INSTALL_PLUGINDIR})
install(TARGETS grip-host RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/plugin.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/grip)

# The ABI the installed header speaks, for the package files (a host may require a minor).
file(STRINGS ${PROJECT_SOURCE_DIR}/plugin.h grip_abi_lines REGEX "^#define GRIP_ABI_M(AJOR|INOR) [0-9]+")
string(REGEX REPLACE ".*GRIP_ABI_MAJOR ([0-9]+).*" "\\1" GRIP_ABI_MAJOR "${grip_abi_lines}")
string(REGEX REPLACE ".*GRIP_ABI_MINOR ([0-9]+).*" "\\1" GRIP_ABI_MINOR "${grip_abi_lines}")

# pkg-config: paths relative to the .pc file's own folder (${pcfiledir}), so that the file is right whatever
# prefix `cmake --install --prefix` or DESTDIR moves the tree to; absolute folders stay absolute.
function(grip_pc_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${GRIP_INSTALL_PKGCONFIGDIR}")
  set(GRIP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH grip_pc_up "/root/${GRIP_INSTALL_PKGCONFIGDIR}" "/root")
  string(REGEX REPLACE "/$" "" grip_pc_up "${grip_pc_up}")
  set(GRIP_PC_PREFIX "\${pcfiledir}/${grip_pc_up}")
endif()
grip_pc_path(GRIP_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
grip_pc_path(GRIP_PC_PLUGINDIR "${GRIP_INSTALL_PLUGINDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/grip.pc.in ${PROJECT_BINARY_DIR}/packaging/grip.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/grip.pc DESTINATION ${GRIP_INSTALL_PKGCONFIGDIR})

# CMake: relocatable too (PACKAGE_INIT computes the prefix from the config file's own place)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gripConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/packaging/gripConfig.cmake
                              INSTALL_DESTINATION ${GRIP_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR GRIP_INSTALL_PLUGINDIR CMAKE_INSTALL_BINDIR)
# 0.x: a new minor may change the package (not the ABI: that is plugin.h's GRIP_ABI_MAJOR, checked at dlopen time)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/packaging/gripConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/packaging/gripConfig.cmake ${PROJECT_BINARY_DIR}/packaging/gripConfigVersion.cmake
        DESTINATION ${GRIP_INSTALL_CMAKEDIR})
