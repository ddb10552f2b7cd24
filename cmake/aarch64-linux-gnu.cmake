# Cross build for AArch64 Linux with Debian's gcc-aarch64-linux-gnu and libc6-dev-arm64-cross
# (make cross-arm64). Libraries come from the cross sysroot; protobuf-c for the model builder
# from Debian's multiarch arm64 package (scripts/install-deps.sh), linked statically so that the
# tests need only the sysroot and ORT's arm64 library at run time.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(ACTX_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${ACTX_CROSS_TRIPLE}-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE ${ACTX_CROSS_TRIPLE})
set(ACTX_CROSS_SYSROOT /usr/${ACTX_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${ACTX_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The arch-independent inputs of the model builder live on the build host (the header of
# protobuf-c is the same for every architecture); the library is the arm64 one.
set(ACTX_MULTIARCH_LIB /usr/lib/${ACTX_CROSS_TRIPLE})
if(EXISTS ${ACTX_MULTIARCH_LIB}/libprotobuf-c.a)
  set(ACTX_PROTOBUF_C_LIB ${ACTX_MULTIARCH_LIB}/libprotobuf-c.a CACHE FILEPATH "")
  set(ACTX_PROTOBUF_C_INCLUDE /usr/include CACHE PATH "")
  set(ACTX_ONNX_PROTO_DIR /usr/include CACHE PATH "")
endif()

# How ctest runs what this build makes on an x86 host: qemu-aarch64 with the cross sysroot.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${ACTX_CROSS_SYSROOT})
