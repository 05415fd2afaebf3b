# ichor_proto(TARGET FILES...): compiles the project's .proto files (proto/, import root proto/)
# into a static library with protobuf messages and gRPC stubs. The messages are generated for the
# lite runtime (`lite:`): no descriptor is registered at start (docs/design.md "Linking"), and
# nothing here uses reflection; the wire format is the same.
function(ichor_proto target)
  set(srcs)
  foreach(rel ${ARGN})
    get_filename_component(dir ${rel} DIRECTORY)
    get_filename_component(name ${rel} NAME_WE)
    set(out ${CMAKE_BINARY_DIR}/proto/${dir}/${name})
    list(APPEND srcs ${out}.pb.cc ${out}.grpc.pb.cc)
    add_custom_command(
      OUTPUT ${out}.pb.cc ${out}.pb.h ${out}.grpc.pb.cc ${out}.grpc.pb.h
      COMMAND protobuf::protoc
      ARGS --proto_path=${CMAKE_SOURCE_DIR}/proto
           --cpp_out=lite:${CMAKE_BINARY_DIR}/proto
           --grpc_out=${CMAKE_BINARY_DIR}/proto
           --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN}
           ${CMAKE_SOURCE_DIR}/proto/${rel}
      DEPENDS ${CMAKE_SOURCE_DIR}/proto/${rel}
      COMMENT "protoc ${rel}")
  endforeach()
  add_library(${target} STATIC ${srcs})
  target_include_directories(${target} SYSTEM PUBLIC ${CMAKE_BINARY_DIR}/proto)
  target_link_libraries(${target} PUBLIC gRPC::grpc++ protobuf::libprotobuf)
endfunction()
