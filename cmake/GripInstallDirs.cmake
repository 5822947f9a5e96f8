# Where `cmake --install` puts grip, relative to the install prefix. GNUInstallDirs gives lib/ (lib64/ or
# lib/<multiarch>/ where the platform's own pkg-config and CMake look there instead); the plugin gets a folder of its
# own, lib/grip/, so that a host searching for plugins finds libgrip.so and nothing else.
include_guard(GLOBAL)
include(GNUInstallDirs)

set(GRIP_INSTALL_PLUGINDIR "${CMAKE_INSTALL_LIBDIR}/grip" CACHE STRING
    "folder of the installed plugin libgrip.so, relative to the install prefix")
set(GRIP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/grip" CACHE STRING
    "folder of gripConfig.cmake, relative to the install prefix")
set(GRIP_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig" CACHE STRING
    "folder of grip.pc, relative to the install prefix")

# The plugin folder as seen from the folder of grip-host, so that an installed grip-host finds the installed plugin
# wherever the prefix is (`cmake --install --prefix` may pick another one than the configured prefix).
function(grip_install_relative out from to)
  foreach(d from to)
    if(IS_ABSOLUTE "${${d}}")
      set(${d}_full "${${d}}")
    else()
      set(${d}_full "${CMAKE_INSTALL_PREFIX}/${${d}}")
    endif()
  endforeach()
  file(RELATIVE_PATH rel "${from_full}" "${to_full}")
  if(rel STREQUAL "")
    set(rel ".")
  endif()
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()

grip_install_relative(GRIP_PLUGIN_RELDIR "${CMAKE_INSTALL_BINDIR}" "${GRIP_INSTALL_PLUGINDIR}")
