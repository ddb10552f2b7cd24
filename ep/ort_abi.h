/* ort_abi.h — our own declarations of the part of ONNX Runtime 1.30's C ABI that actx uses.
 *
 * ORT ships no header with its C library, so we declare what we call. The rules that keep this
 * safe:
 *   - Function tables (OrtApi, OrtEpApi) are structs of function pointers in slot order. Slots we
 *     call have their real signature; the slots between them are padding (unused_<first>_<last>_).
 *     Every typed member is listed in an ACTX_ORT_*_MEMBERS table below, which produces a
 *     _Static_assert on its byte offset, so a member in the wrong slot does not compile.
 *   - Structs that we fill and hand to ORT (OrtEp, OrtEpFactory, OrtNodeComputeInfo,
 *     OrtNodeFusionOptions, OrtKernelImpl) are declared whole: ORT reads early slots without
 *     checking ort_version_supported, so zero-fill them and set every member we implement.
 *   - tests/ort/test_ort_abi_layout.c compares every listed member, by name, with the layout
 *     compiled from the real 1.30 headers (tests/ort/data/ort-1.30-abi-layout.tsv).
 * On Linux ORT uses the default calling convention and char paths (ORTCHAR_T is char). */
#ifndef ACTX_ORT_ABI_H
#define ACTX_ORT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API version these declarations describe; pass it to OrtApiBase.GetApi and put it in the
 * ort_version_supported field of every struct handed to ORT. */
#define ORT_API_VERSION 30

/* ---- Opaque handles ------------------------------------------------------------------------ */

/* Runtime objects (sessions, values, type information, devices). */
typedef struct OrtEnv OrtEnv;
typedef struct OrtStatus OrtStatus; /* NULL means success */
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtIoBinding OrtIoBinding;
typedef struct OrtSession OrtSession;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtCustomOpDomain OrtCustomOpDomain;
typedef struct OrtModelMetadata OrtModelMetadata;
typedef struct OrtThreadingOptions OrtThreadingOptions;
typedef struct OrtOpAttr OrtOpAttr;
typedef struct OrtLogger OrtLogger;
typedef struct OrtKernelInfo OrtKernelInfo;
typedef struct OrtKernelContext OrtKernelContext;
typedef struct OrtValueInfo OrtValueInfo;
typedef struct OrtNode OrtNode;
typedef struct OrtGraph OrtGraph;
typedef struct OrtModel OrtModel;
typedef struct OrtHardwareDevice OrtHardwareDevice;
typedef struct OrtEpDevice OrtEpDevice;
typedef struct OrtKeyValuePairs OrtKeyValuePairs;
typedef struct OrtSyncStream OrtSyncStream;
typedef struct OrtExternalInitializerInfo OrtExternalInitializerInfo;
typedef struct OrtDeviceEpIncompatibilityDetails OrtDeviceEpIncompatibilityDetails;
typedef struct OrtEpAssignedSubgraph OrtEpAssignedSubgraph;
typedef struct OrtEpAssignedNode OrtEpAssignedNode;

/* Objects of the plugin-EP interface. */
typedef struct OrtEpApi OrtEpApi;
typedef struct OrtEp OrtEp;
typedef struct OrtEpFactory OrtEpFactory;
typedef struct OrtEpGraphSupportInfo OrtEpGraphSupportInfo;
typedef struct OrtMemoryDevice OrtMemoryDevice;
typedef struct OrtNodeComputeContext OrtNodeComputeContext;
typedef struct OrtNodeComputeInfo OrtNodeComputeInfo;
typedef struct OrtNodeFusionOptions OrtNodeFusionOptions;
typedef struct OrtDataTransferImpl OrtDataTransferImpl;
typedef struct OrtSyncStreamImpl OrtSyncStreamImpl;
typedef struct OrtExternalResourceImporterImpl OrtExternalResourceImporterImpl;
typedef struct OrtEpProfilerImpl OrtEpProfilerImpl;
typedef struct OrtGraphicsInteropConfig OrtGraphicsInteropConfig;
typedef struct OrtResourceCount OrtResourceCount;
typedef struct OrtOpSchema OrtOpSchema;
typedef struct OrtOpSchemaTypeConstraint OrtOpSchemaTypeConstraint;
typedef struct OrtProfilingEvent OrtProfilingEvent;
typedef struct OrtProfilingEventsContainer OrtProfilingEventsContainer;
typedef struct OrtKernelRegistry OrtKernelRegistry;
typedef struct OrtKernelDefBuilder OrtKernelDefBuilder;
typedef struct OrtKernelDef OrtKernelDef;
typedef struct OrtKernelImpl OrtKernelImpl;
typedef struct OrtDataType OrtDataType;
typedef struct OrtSharedPrePackedWeightCache OrtSharedPrePackedWeightCache;
typedef struct OrtLoopKernelHelper OrtLoopKernelHelper;
typedef struct OrtScanKernelHelper OrtScanKernelHelper;

/* ---- Enumerations (values fixed by the ABI) -------------------------------------------------- */

typedef enum OrtErrorCode {
  ORT_OK = 0,
  ORT_FAIL = 1,
  ORT_INVALID_ARGUMENT = 2,
  ORT_NO_SUCHFILE = 3,
  ORT_NO_MODEL = 4,
  ORT_ENGINE_ERROR = 5,
  ORT_RUNTIME_EXCEPTION = 6,
  ORT_INVALID_PROTOBUF = 7,
  ORT_MODEL_LOADED = 8,
  ORT_NOT_IMPLEMENTED = 9,
  ORT_INVALID_GRAPH = 10,
  ORT_EP_FAIL = 11,
  ORT_MODEL_LOAD_CANCELED = 12,
  ORT_MODEL_REQUIRES_COMPILATION = 13,
  ORT_NOT_FOUND = 14,
  ORT_DEVICE_RESET = 15,
} OrtErrorCode;

/* Tensor element types: the same numbers as onnx.proto's TensorProto.DataType. */
typedef enum ONNXTensorElementDataType {
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN = 17,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ = 18,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 = 19,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ = 20,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 = 21,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 = 22,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 = 23,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 = 24,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 = 25,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0 = 26,
} ONNXTensorElementDataType;

typedef enum ONNXType {
  ONNX_TYPE_UNKNOWN = 0,
  ONNX_TYPE_TENSOR = 1,
  ONNX_TYPE_SEQUENCE = 2,
  ONNX_TYPE_MAP = 3,
  ONNX_TYPE_OPAQUE = 4,
  ONNX_TYPE_SPARSETENSOR = 5,
  ONNX_TYPE_OPTIONAL = 6,
} ONNXType;

typedef enum OrtLoggingLevel {
  ORT_LOGGING_LEVEL_VERBOSE = 0,
  ORT_LOGGING_LEVEL_INFO = 1,
  ORT_LOGGING_LEVEL_WARNING = 2,
  ORT_LOGGING_LEVEL_ERROR = 3,
  ORT_LOGGING_LEVEL_FATAL = 4,
} OrtLoggingLevel;

/* Attribute kinds, as read by OpAttr_GetType / ReadOpAttr. */
typedef enum OrtOpAttrType {
  ORT_OP_ATTR_UNDEFINED = 0,
  ORT_OP_ATTR_INT = 1,
  ORT_OP_ATTR_INTS = 2,
  ORT_OP_ATTR_FLOAT = 3,
  ORT_OP_ATTR_FLOATS = 4,
  ORT_OP_ATTR_STRING = 5,
  ORT_OP_ATTR_STRINGS = 6,
  ORT_OP_ATTR_GRAPH = 7,
  ORT_OP_ATTR_TENSOR = 8,
} OrtOpAttrType;

typedef enum GraphOptimizationLevel {
  ORT_DISABLE_ALL = 0,
  ORT_ENABLE_BASIC = 1,
  ORT_ENABLE_EXTENDED = 2,
  ORT_ENABLE_LAYOUT = 3,
  ORT_ENABLE_ALL = 99,
} GraphOptimizationLevel;

typedef enum ExecutionMode {
  ORT_SEQUENTIAL = 0,
  ORT_PARALLEL = 1,
} ExecutionMode;

typedef enum OrtAllocatorType {
  OrtInvalidAllocator = -1,
  OrtDeviceAllocator = 0,
  OrtArenaAllocator = 1,
  OrtReadOnlyAllocator = 2,
} OrtAllocatorType;

typedef enum OrtMemType {
  OrtMemTypeCPUInput = -2,
  OrtMemTypeCPUOutput = -1,
  OrtMemTypeCPU = -1, /* same as OrtMemTypeCPUOutput */
  OrtMemTypeDefault = 0,
} OrtMemType;

typedef enum OrtDeviceMemoryType {
  OrtDeviceMemoryType_DEFAULT = 0,
  OrtDeviceMemoryType_HOST_ACCESSIBLE = 5,
} OrtDeviceMemoryType;

typedef enum OrtMemoryInfoDeviceType {
  OrtMemoryInfoDeviceType_CPU = 0,
  OrtMemoryInfoDeviceType_GPU = 1,
  OrtMemoryInfoDeviceType_FPGA = 2,
  OrtMemoryInfoDeviceType_NPU = 3,
} OrtMemoryInfoDeviceType;

typedef enum OrtHardwareDeviceType {
  OrtHardwareDeviceType_CPU = 0,
  OrtHardwareDeviceType_GPU = 1,
  OrtHardwareDeviceType_NPU = 2,
} OrtHardwareDeviceType;

typedef enum OrtExecutionProviderDevicePolicy {
  OrtExecutionProviderDevicePolicy_DEFAULT = 0,
  OrtExecutionProviderDevicePolicy_PREFER_CPU = 1,
  OrtExecutionProviderDevicePolicy_PREFER_NPU = 2,
  OrtExecutionProviderDevicePolicy_PREFER_GPU = 3,
  OrtExecutionProviderDevicePolicy_MAX_PERFORMANCE = 4,
  OrtExecutionProviderDevicePolicy_MAX_EFFICIENCY = 5,
  OrtExecutionProviderDevicePolicy_MIN_OVERALL_POWER = 6,
} OrtExecutionProviderDevicePolicy;

typedef enum OrtCompiledModelCompatibility {
  OrtCompiledModelCompatibility_EP_NOT_APPLICABLE = 0,
  OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL = 1,
  OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION = 2,
  OrtCompiledModelCompatibility_EP_UNSUPPORTED = 3,
} OrtCompiledModelCompatibility;

typedef enum OrtEpDataLayout {
  OrtEpDataLayout_NCHW = 0,
  OrtEpDataLayout_NHWC = 1,
  OrtEpDataLayout_Default = 0,
} OrtEpDataLayout;

typedef enum OrtGraphCaptureNodeAssignmentPolicy {
  OrtGraphCaptureNodeAssignmentPolicy_ALL_NODES_ON_EP = 0,
  OrtGraphCaptureNodeAssignmentPolicy_ALLOW_CPU_FOR_SHAPES = 1,
} OrtGraphCaptureNodeAssignmentPolicy;

typedef enum OrtWeightlessSupport {
  OrtWeightlessSupport_NONE = 0,
  OrtWeightlessSupport_EXTERNAL_ONLY = 1,
  OrtWeightlessSupport_ALL = 2,
} OrtWeightlessSupport;

typedef enum OrtProfilingEventCategory {
  OrtProfilingEventCategory_SESSION = 0,
  OrtProfilingEventCategory_NODE = 1,
  OrtProfilingEventCategory_KERNEL = 2,
  OrtProfilingEventCategory_API = 3,
} OrtProfilingEventCategory;

/* ---- Callback types ---------------------------------------------------------------------- */

typedef void (*OrtLoggingFunction)(void *param, OrtLoggingLevel severity, const char *category,
                                   const char *logid, const char *code_location,
                                   const char *message);
typedef OrtStatus *(*EpSelectionDelegate)(const OrtEpDevice **ep_devices, size_t num_devices,
                                          const OrtKeyValuePairs *model_metadata,
                                          const OrtKeyValuePairs *runtime_metadata,
                                          const OrtEpDevice **selected, size_t max_selected,
                                          size_t *num_selected, void *state);
typedef OrtStatus *(*OrtKernelCreateFunc)(void *kernel_create_func_state, const OrtKernelInfo *info,
                                          OrtKernelImpl **kernel_out);

/* ---- Small structs ----------------------------------------------------------------------- */

/* An allocator (ORT's default CPU allocator, or one an EP implements). */
typedef struct OrtAllocator {
  uint32_t version; /* ORT_API_VERSION of whoever filled it */
  void *(*Alloc)(struct OrtAllocator *this_, size_t size);
  void (*Free)(struct OrtAllocator *this_, void *p);
  const OrtMemoryInfo *(*Info)(const struct OrtAllocator *this_);
  void *(*Reserve)(struct OrtAllocator *this_, size_t size);
  OrtStatus *(*GetStats)(const struct OrtAllocator *this_, OrtKeyValuePairs **out);
  void *(*AllocOnStream)(struct OrtAllocator *this_, size_t size, OrtSyncStream *stream);
  OrtStatus *(*Shrink)(struct OrtAllocator *this_);
} OrtAllocator;

typedef struct OrtApi OrtApi;

/* The library's one export: OrtGetApiBase()->GetApi(ORT_API_VERSION). */
typedef struct OrtApiBase {
  const OrtApi *(*GetApi)(uint32_t version); /* NULL if version is newer than the library */
  const char *(*GetVersionString)(void);     /* "1.30.0" */
} OrtApiBase;

const OrtApiBase *OrtGetApiBase(void);

/* How ORT should hand a fused subgraph to OrtEp.Compile (EpGraphSupportInfo_AddNodesToFuse). */
struct OrtNodeFusionOptions {
  uint32_t ort_version_supported;
  bool drop_constant_initializers; /* true: the EP keeps its own copy of constant inputs */
};

/* A kernel ORT creates from an EP's kernel registry (OrtKernelCreateFunc) and runs per node. */
struct OrtKernelImpl {
  uint32_t ort_version_supported;
  uint32_t flags;
  OrtStatus *(*Compute)(OrtKernelImpl *this_ptr, OrtKernelContext *context);
  void (*Release)(OrtKernelImpl *this_ptr);
  OrtStatus *(*PrePackWeight)(OrtKernelImpl *this_ptr, const OrtValue *tensor, int input_index,
                              OrtAllocator *allocator,
                              OrtSharedPrePackedWeightCache *prepacked_weight_cache,
                              bool *is_packed);
  OrtStatus *(*SetSharedPrePackedWeight)(OrtKernelImpl *this_ptr,
                                         const void *const *buffer_data_ptrs,
                                         const size_t *buffer_data_sizes, size_t num_buffers,
                                         int input_index);
};

/* The C API table: OrtGetApiBase()->GetApi(ORT_API_VERSION). 425 slots in 1.30. */
struct OrtApi {
  /* status */
  OrtStatus *(*CreateStatus)(OrtErrorCode code, const char *msg);
  OrtErrorCode (*GetErrorCode)(const OrtStatus *status);
  const char *(*GetErrorMessage)(const OrtStatus *status);
  /* environment */
  OrtStatus *(*CreateEnv)(OrtLoggingLevel log_severity_level, const char *logid, OrtEnv **out);
  OrtStatus *(*CreateEnvWithCustomLogger)(OrtLoggingFunction logging_function, void *logger_param,
                                          OrtLoggingLevel log_severity_level, const char *logid,
                                          OrtEnv **out);
  void *unused_5_6_[2];
  /* sessions: create and run */
  OrtStatus *(*CreateSession)(const OrtEnv *env, const char *model_path,
                              const OrtSessionOptions *options, OrtSession **out);
  OrtStatus *(*CreateSessionFromArray)(const OrtEnv *env, const void *model_data,
                                       size_t model_data_length, const OrtSessionOptions *options,
                                       OrtSession **out);
  OrtStatus *(*Run)(OrtSession *session, const OrtRunOptions *run_options,
                    const char *const *input_names, const OrtValue *const *inputs, size_t input_len,
                    const char *const *output_names, size_t output_names_len, OrtValue **outputs);
  /* session options */
  OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **options);
  OrtStatus *(*SetOptimizedModelFilePath)(OrtSessionOptions *options,
                                          const char *optimized_model_filepath);
  OrtStatus *(*CloneSessionOptions)(const OrtSessionOptions *in_options,
                                    OrtSessionOptions **out_options);
  OrtStatus *(*SetSessionExecutionMode)(OrtSessionOptions *options, ExecutionMode execution_mode);
  OrtStatus *(*EnableProfiling)(OrtSessionOptions *options, const char *profile_file_prefix);
  OrtStatus *(*DisableProfiling)(OrtSessionOptions *options);
  OrtStatus *(*EnableMemPattern)(OrtSessionOptions *options);
  OrtStatus *(*DisableMemPattern)(OrtSessionOptions *options);
  OrtStatus *(*EnableCpuMemArena)(OrtSessionOptions *options);
  OrtStatus *(*DisableCpuMemArena)(OrtSessionOptions *options);
  OrtStatus *(*SetSessionLogId)(OrtSessionOptions *options, const char *logid);
  OrtStatus *(*SetSessionLogVerbosityLevel)(OrtSessionOptions *options,
                                            int session_log_verbosity_level);
  OrtStatus *(*SetSessionLogSeverityLevel)(OrtSessionOptions *options,
                                           int session_log_severity_level);
  OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *options,
                                                 GraphOptimizationLevel graph_optimization_level);
  OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *options, int intra_op_num_threads);
  OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *options, int inter_op_num_threads);
  void *unused_26_29_[4];
  /* session inputs and outputs */
  OrtStatus *(*SessionGetInputCount)(const OrtSession *session, size_t *out);
  OrtStatus *(*SessionGetOutputCount)(const OrtSession *session, size_t *out);
  OrtStatus *(*SessionGetOverridableInitializerCount)(const OrtSession *session, size_t *out);
  OrtStatus *(*SessionGetInputTypeInfo)(const OrtSession *session, size_t index,
                                        OrtTypeInfo **type_info);
  OrtStatus *(*SessionGetOutputTypeInfo)(const OrtSession *session, size_t index,
                                         OrtTypeInfo **type_info);
  OrtStatus *(*SessionGetOverridableInitializerTypeInfo)(const OrtSession *session, size_t index,
                                                         OrtTypeInfo **type_info);
  OrtStatus *(*SessionGetInputName)(const OrtSession *session, size_t index,
                                    OrtAllocator *allocator, char **value);
  OrtStatus *(*SessionGetOutputName)(const OrtSession *session, size_t index,
                                     OrtAllocator *allocator, char **value);
  OrtStatus *(*SessionGetOverridableInitializerName)(const OrtSession *session, size_t index,
                                                     OrtAllocator *allocator, char **value);
  /* run options */
  OrtStatus *(*CreateRunOptions)(OrtRunOptions **out);
  OrtStatus *(*RunOptionsSetRunLogVerbosityLevel)(OrtRunOptions *options, int log_verbosity_level);
  OrtStatus *(*RunOptionsSetRunLogSeverityLevel)(OrtRunOptions *options, int log_severity_level);
  OrtStatus *(*RunOptionsSetRunTag)(OrtRunOptions *options, const char *run_tag);
  OrtStatus *(*RunOptionsGetRunLogVerbosityLevel)(const OrtRunOptions *options,
                                                  int *log_verbosity_level);
  OrtStatus *(*RunOptionsGetRunLogSeverityLevel)(const OrtRunOptions *options,
                                                 int *log_severity_level);
  OrtStatus *(*RunOptionsGetRunTag)(const OrtRunOptions *options, const char **run_tag);
  OrtStatus *(*RunOptionsSetTerminate)(OrtRunOptions *options);
  OrtStatus *(*RunOptionsUnsetTerminate)(OrtRunOptions *options);
  /* tensor values */
  OrtStatus *(*CreateTensorAsOrtValue)(OrtAllocator *allocator, const int64_t *shape,
                                       size_t shape_len, ONNXTensorElementDataType type,
                                       OrtValue **out);
  OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *p_data,
                                               size_t p_data_len, const int64_t *shape,
                                               size_t shape_len, ONNXTensorElementDataType type,
                                               OrtValue **out);
  OrtStatus *(*IsTensor)(const OrtValue *value, int *out);
  OrtStatus *(*GetTensorMutableData)(OrtValue *value, void **out);
  void *unused_52_54_[3];
  /* type and shape information */
  OrtStatus *(*CastTypeInfoToTensorInfo)(const OrtTypeInfo *type_info,
                                         const OrtTensorTypeAndShapeInfo **out);
  OrtStatus *(*GetOnnxTypeFromTypeInfo)(const OrtTypeInfo *type_info, ONNXType *out);
  OrtStatus *(*CreateTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo **out);
  OrtStatus *(*SetTensorElementType)(OrtTensorTypeAndShapeInfo *info,
                                     ONNXTensorElementDataType type);
  OrtStatus *(*SetDimensions)(OrtTensorTypeAndShapeInfo *info, const int64_t *dim_values,
                              size_t dim_count);
  OrtStatus *(*GetTensorElementType)(const OrtTensorTypeAndShapeInfo *info,
                                     ONNXTensorElementDataType *out);
  OrtStatus *(*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
  OrtStatus *(*GetDimensions)(const OrtTensorTypeAndShapeInfo *info, int64_t *dim_values,
                              size_t dim_values_length);
  OrtStatus *(*GetSymbolicDimensions)(const OrtTensorTypeAndShapeInfo *info,
                                      const char *dim_params[], size_t dim_params_length);
  OrtStatus *(*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
  OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *value, OrtTensorTypeAndShapeInfo **out);
  OrtStatus *(*GetTypeInfo)(const OrtValue *value, OrtTypeInfo **out);
  OrtStatus *(*GetValueType)(const OrtValue *value, ONNXType *out);
  /* memory info and allocators */
  OrtStatus *(*CreateMemoryInfo)(const char *name, OrtAllocatorType type, int id,
                                 OrtMemType mem_type, OrtMemoryInfo **out);
  OrtStatus *(*CreateCpuMemoryInfo)(OrtAllocatorType type, OrtMemType mem_type,
                                    OrtMemoryInfo **out);
  OrtStatus *(*CompareMemoryInfo)(const OrtMemoryInfo *info1, const OrtMemoryInfo *info2, int *out);
  OrtStatus *(*MemoryInfoGetName)(const OrtMemoryInfo *ptr, const char **out);
  OrtStatus *(*MemoryInfoGetId)(const OrtMemoryInfo *ptr, int *out);
  OrtStatus *(*MemoryInfoGetMemType)(const OrtMemoryInfo *ptr, OrtMemType *out);
  OrtStatus *(*MemoryInfoGetType)(const OrtMemoryInfo *ptr, OrtAllocatorType *out);
  OrtStatus *(*AllocatorAlloc)(OrtAllocator *ort_allocator, size_t size, void **out);
  OrtStatus *(*AllocatorFree)(OrtAllocator *ort_allocator, void *p);
  OrtStatus *(*AllocatorGetInfo)(const OrtAllocator *ort_allocator, const OrtMemoryInfo **out);
  OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **out);
  /* symbolic dimensions fixed at session creation */
  OrtStatus *(*AddFreeDimensionOverride)(OrtSessionOptions *options, const char *dim_denotation,
                                         int64_t dim_value);
  void *unused_80_84_[5];
  /* custom-op kernel info and kernel context (inputs, outputs) */
  OrtStatus *(*KernelInfoGetAttribute_float)(const OrtKernelInfo *info, const char *name,
                                             float *out);
  OrtStatus *(*KernelInfoGetAttribute_int64)(const OrtKernelInfo *info, const char *name,
                                             int64_t *out);
  OrtStatus *(*KernelInfoGetAttribute_string)(const OrtKernelInfo *info, const char *name,
                                              char *out, size_t *size);
  OrtStatus *(*KernelContext_GetInputCount)(const OrtKernelContext *context, size_t *out);
  OrtStatus *(*KernelContext_GetOutputCount)(const OrtKernelContext *context, size_t *out);
  OrtStatus *(*KernelContext_GetInput)(const OrtKernelContext *context, size_t index,
                                       const OrtValue **out);
  OrtStatus *(*KernelContext_GetOutput)(OrtKernelContext *context, size_t index,
                                        const int64_t *dim_values, size_t dim_count,
                                        OrtValue **out);
  /* release functions */
  void (*ReleaseEnv)(OrtEnv *input);
  void (*ReleaseStatus)(OrtStatus *input);
  void (*ReleaseMemoryInfo)(OrtMemoryInfo *input);
  void (*ReleaseSession)(OrtSession *input);
  void (*ReleaseValue)(OrtValue *input);
  void (*ReleaseRunOptions)(OrtRunOptions *input);
  void (*ReleaseTypeInfo)(OrtTypeInfo *input);
  void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo *input);
  void (*ReleaseSessionOptions)(OrtSessionOptions *input);
  void *unused_101_109_[9];
  /* profiling */
  OrtStatus *(*SessionEndProfiling)(OrtSession *session, OrtAllocator *allocator, char **out);
  void *unused_111_123_[13];
  /* providers and session configuration */
  OrtStatus *(*AddFreeDimensionOverrideByName)(OrtSessionOptions *options, const char *dim_name,
                                               int64_t dim_value);
  OrtStatus *(*GetAvailableProviders)(char ***out_ptr, int *provider_length);
  OrtStatus *(*ReleaseAvailableProviders)(char **ptr, int providers_length);
  void *unused_127_129_[3];
  OrtStatus *(*AddSessionConfigEntry)(OrtSessionOptions *options, const char *config_key,
                                      const char *config_value);
  /* session allocators */
  OrtStatus *(*CreateAllocator)(const OrtSession *session, const OrtMemoryInfo *mem_info,
                                OrtAllocator **out);
  void (*ReleaseAllocator)(OrtAllocator *input);
  void *unused_133_149_[17];
  /* initializers and run configuration */
  OrtStatus *(*AddInitializer)(OrtSessionOptions *options, const char *name, const OrtValue *val);
  void *unused_151_161_[11];
  /* kernel info: list attributes (*size: in, the room in out; out, the count; out NULL asks it) */
  OrtStatus *(*KernelInfoGetAttributeArray_float)(const OrtKernelInfo *info, const char *name,
                                                  float *out, size_t *size);
  OrtStatus *(*KernelInfoGetAttributeArray_int64)(const OrtKernelInfo *info, const char *name,
                                                  int64_t *out, size_t *size);
  void *unused_164_;
  OrtStatus *(*AddRunConfigEntry)(OrtRunOptions *options, const char *config_key,
                                  const char *config_value);
  void *unused_166_191_[26];
  /* values */
  OrtStatus *(*HasValue)(const OrtValue *value, int *out);
  void *unused_193_;
  OrtStatus *(*GetTensorMemoryInfo)(const OrtValue *value, const OrtMemoryInfo **mem_info);
  void *unused_195_210_[16];
  /* op attributes */
  OrtStatus *(*CreateOpAttr)(const char *name, const void *data, int len, OrtOpAttrType type,
                             OrtOpAttr **op_attr);
  void (*ReleaseOpAttr)(OrtOpAttr *input);
  void *unused_213_215_[3];
  /* named execution providers */
  OrtStatus *(*SessionOptionsAppendExecutionProvider)(OrtSessionOptions *options,
                                                      const char *provider_name,
                                                      const char *const *provider_options_keys,
                                                      const char *const *provider_options_values,
                                                      size_t num_keys);
  void *unused_217_224_[8];
  /* memory device type and env log level */
  void (*MemoryInfoGetDeviceType)(const OrtMemoryInfo *ptr, OrtMemoryInfoDeviceType *out);
  OrtStatus *(*UpdateEnvWithCustomLogLevel)(OrtEnv *ort_env, OrtLoggingLevel log_severity_level);
  void *unused_227_229_[3];
  /* kernel info */
  OrtStatus *(*KernelInfo_GetInputCount)(const OrtKernelInfo *info, size_t *out);
  OrtStatus *(*KernelInfo_GetOutputCount)(const OrtKernelInfo *info, size_t *out);
  OrtStatus *(*KernelInfo_GetInputName)(const OrtKernelInfo *info, size_t index, char *out,
                                        size_t *size);
  OrtStatus *(*KernelInfo_GetOutputName)(const OrtKernelInfo *info, size_t index, char *out,
                                         size_t *size);
  OrtStatus *(*KernelInfo_GetInputTypeInfo)(const OrtKernelInfo *info, size_t index,
                                            OrtTypeInfo **type_info);
  OrtStatus *(*KernelInfo_GetOutputTypeInfo)(const OrtKernelInfo *info, size_t index,
                                             OrtTypeInfo **type_info);
  OrtStatus *(*KernelInfoGetAttribute_tensor)(const OrtKernelInfo *info, const char *name,
                                              OrtAllocator *allocator, OrtValue **out);
  /* session option config entries */
  OrtStatus *(*HasSessionConfigEntry)(const OrtSessionOptions *options, const char *config_key,
                                      int *out);
  OrtStatus *(*GetSessionConfigEntry)(const OrtSessionOptions *options, const char *config_key,
                                      char *config_value, size_t *size);
  void *unused_239_243_[5];
  /* kernel info and logging */
  OrtStatus *(*KernelInfo_GetNodeName)(const OrtKernelInfo *info, char *out, size_t *size);
  OrtStatus *(*KernelInfo_GetLogger)(const OrtKernelInfo *info, const OrtLogger **logger);
  OrtStatus *(*KernelContext_GetLogger)(const OrtKernelContext *context, const OrtLogger **logger);
  OrtStatus *(*Logger_LogMessage)(const OrtLogger *logger, OrtLoggingLevel log_severity_level,
                                  const char *message, const char *file_path, int line_number,
                                  const char *func_name);
  OrtStatus *(*Logger_GetLoggingSeverityLevel)(const OrtLogger *logger, OrtLoggingLevel *out);
  void *unused_249_252_[4];
  /* kernel context allocator; build information */
  OrtStatus *(*KernelContext_GetAllocator)(const OrtKernelContext *context,
                                           const OrtMemoryInfo *mem_info, OrtAllocator **out);
  const char *(*GetBuildInfoString)(void);
  void *unused_255_265_[11];
  /* logging callback */
  OrtStatus *(*SetUserLoggingFunction)(OrtSessionOptions *options,
                                       OrtLoggingFunction user_logging_function,
                                       void *user_logging_param);
  void *unused_267_271_[5];
  /* op attributes, determinism and the intra-op pool */
  OrtStatus *(*ReadOpAttr)(const OrtOpAttr *op_attr, OrtOpAttrType type, void *data, size_t len,
                           size_t *out);
  OrtStatus *(*SetDeterministicCompute)(OrtSessionOptions *options, bool value);
  OrtStatus *(*KernelContext_ParallelFor)(const OrtKernelContext *context,
                                          void (*fn)(void *, size_t), size_t total,
                                          size_t num_batch, void *usr_data);
  void *unused_275_276_[2];
  /* kernel context scratch memory and kernel info allocator */
  OrtStatus *(*KernelContext_GetScratchBuffer)(const OrtKernelContext *context,
                                               const OrtMemoryInfo *mem_info, size_t count_or_bytes,
                                               void **out);
  OrtStatus *(*KernelInfoGetAllocator)(const OrtKernelInfo *info, OrtMemType mem_type,
                                       OrtAllocator **out);
  void *unused_279_284_[6];
  /* graph-API releases and value-info basics */
  void (*ReleaseValueInfo)(OrtValueInfo *input);
  void (*ReleaseNode)(OrtNode *input);
  void (*ReleaseGraph)(OrtGraph *input);
  void (*ReleaseModel)(OrtModel *input);
  OrtStatus *(*GetValueInfoName)(const OrtValueInfo *value_info, const char **name);
  OrtStatus *(*GetValueInfoTypeInfo)(const OrtValueInfo *value_info, const OrtTypeInfo **type_info);
  void *unused_291_;
  /* tensors with deleters */
  OrtStatus *(*CreateTensorWithDataAndDeleterAsOrtValue)(OrtAllocator *deleter, void *p_data,
                                                         size_t p_data_len, const int64_t *shape,
                                                         size_t shape_len,
                                                         ONNXTensorElementDataType type,
                                                         OrtValue **out);
  void *unused_293_294_[2];
  /* key-value pairs */
  void (*CreateKeyValuePairs)(OrtKeyValuePairs **out);
  void (*AddKeyValuePair)(OrtKeyValuePairs *kvps, const char *key, const char *value);
  const char *(*GetKeyValue)(const OrtKeyValuePairs *kvps, const char *key);
  void (*GetKeyValuePairs)(const OrtKeyValuePairs *kvps, const char *const **keys,
                           const char *const **values, size_t *num_entries);
  void (*RemoveKeyValuePair)(OrtKeyValuePairs *kvps, const char *key);
  void (*ReleaseKeyValuePairs)(OrtKeyValuePairs *input);
  /* plugin execution provider libraries and devices */
  OrtStatus *(*RegisterExecutionProviderLibrary)(OrtEnv *env, const char *registration_name,
                                                 const char *path);
  OrtStatus *(*UnregisterExecutionProviderLibrary)(OrtEnv *env, const char *registration_name);
  OrtStatus *(*GetEpDevices)(const OrtEnv *env, const OrtEpDevice *const **ep_devices,
                             size_t *num_ep_devices);
  OrtStatus *(*SessionOptionsAppendExecutionProvider_V2)(
      OrtSessionOptions *session_options, OrtEnv *env, const OrtEpDevice *const *ep_devices,
      size_t num_ep_devices, const char *const *ep_option_keys, const char *const *ep_option_vals,
      size_t num_ep_options);
  OrtStatus *(*SessionOptionsSetEpSelectionPolicy)(OrtSessionOptions *session_options,
                                                   OrtExecutionProviderDevicePolicy policy);
  OrtStatus *(*SessionOptionsSetEpSelectionPolicyDelegate)(OrtSessionOptions *session_options,
                                                           EpSelectionDelegate delegate,
                                                           void *delegate_state);
  /* hardware devices */
  OrtHardwareDeviceType (*HardwareDevice_Type)(const OrtHardwareDevice *device);
  uint32_t (*HardwareDevice_VendorId)(const OrtHardwareDevice *device);
  const char *(*HardwareDevice_Vendor)(const OrtHardwareDevice *device);
  uint32_t (*HardwareDevice_DeviceId)(const OrtHardwareDevice *device);
  const OrtKeyValuePairs *(*HardwareDevice_Metadata)(const OrtHardwareDevice *device);
  /* execution-provider devices */
  const char *(*EpDevice_EpName)(const OrtEpDevice *ep_device);
  const char *(*EpDevice_EpVendor)(const OrtEpDevice *ep_device);
  const OrtKeyValuePairs *(*EpDevice_EpMetadata)(const OrtEpDevice *ep_device);
  const OrtKeyValuePairs *(*EpDevice_EpOptions)(const OrtEpDevice *ep_device);
  const OrtHardwareDevice *(*EpDevice_Device)(const OrtEpDevice *ep_device);
  /* EP API; tensor size; allocator statistics; memory info v2 */
  const OrtEpApi *(*GetEpApi)(void);
  OrtStatus *(*GetTensorSizeInBytes)(const OrtValue *ort_value, size_t *size);
  OrtStatus *(*AllocatorGetStats)(const OrtAllocator *ort_allocator, OrtKeyValuePairs **out);
  OrtStatus *(*CreateMemoryInfo_V2)(const char *name, OrtMemoryInfoDeviceType device_type,
                                    uint32_t vendor_id, int32_t device_id,
                                    OrtDeviceMemoryType mem_type, size_t alignment,
                                    OrtAllocatorType allocator_type, OrtMemoryInfo **out);
  OrtDeviceMemoryType (*MemoryInfoGetDeviceMemType)(const OrtMemoryInfo *ptr);
  uint32_t (*MemoryInfoGetVendorId)(const OrtMemoryInfo *ptr);
  /* value infos (graph edges) */
  OrtStatus *(*ValueInfo_GetValueProducer)(const OrtValueInfo *value_info,
                                           const OrtNode **producer_node,
                                           size_t *producer_output_index);
  OrtStatus *(*ValueInfo_GetValueNumConsumers)(const OrtValueInfo *value_info,
                                               size_t *num_consumers);
  OrtStatus *(*ValueInfo_GetValueConsumers)(const OrtValueInfo *value_info, const OrtNode **nodes,
                                            int64_t *input_indices, size_t num_consumers);
  OrtStatus *(*ValueInfo_GetInitializerValue)(const OrtValueInfo *value_info,
                                              const OrtValue **initializer_value);
  OrtStatus *(*ValueInfo_GetExternalInitializerInfo)(const OrtValueInfo *value_info,
                                                     OrtExternalInitializerInfo **info);
  OrtStatus *(*ValueInfo_IsRequiredGraphInput)(const OrtValueInfo *value_info,
                                               bool *is_required_graph_input);
  OrtStatus *(*ValueInfo_IsOptionalGraphInput)(const OrtValueInfo *value_info,
                                               bool *is_optional_graph_input);
  OrtStatus *(*ValueInfo_IsGraphOutput)(const OrtValueInfo *value_info, bool *is_graph_output);
  OrtStatus *(*ValueInfo_IsConstantInitializer)(const OrtValueInfo *value_info,
                                                bool *is_constant_initializer);
  OrtStatus *(*ValueInfo_IsFromOuterScope)(const OrtValueInfo *value_info,
                                           bool *is_from_outer_scope);
  /* graphs */
  OrtStatus *(*Graph_GetName)(const OrtGraph *graph, const char **graph_name);
  OrtStatus *(*Graph_GetModelPath)(const OrtGraph *graph, const char **model_path);
  OrtStatus *(*Graph_GetOnnxIRVersion)(const OrtGraph *graph, int64_t *onnx_ir_version);
  OrtStatus *(*Graph_GetNumOperatorSets)(const OrtGraph *graph, size_t *num_operator_sets);
  OrtStatus *(*Graph_GetOperatorSets)(const OrtGraph *graph, const char **domains,
                                      int64_t *opset_versions, size_t num_operator_sets);
  OrtStatus *(*Graph_GetNumInputs)(const OrtGraph *graph, size_t *num_inputs);
  OrtStatus *(*Graph_GetInputs)(const OrtGraph *graph, const OrtValueInfo **inputs,
                                size_t num_inputs);
  OrtStatus *(*Graph_GetNumOutputs)(const OrtGraph *graph, size_t *num_outputs);
  OrtStatus *(*Graph_GetOutputs)(const OrtGraph *graph, const OrtValueInfo **outputs,
                                 size_t num_outputs);
  OrtStatus *(*Graph_GetNumInitializers)(const OrtGraph *graph, size_t *num_initializers);
  OrtStatus *(*Graph_GetInitializers)(const OrtGraph *graph, const OrtValueInfo **initializers,
                                      size_t num_initializers);
  OrtStatus *(*Graph_GetNumNodes)(const OrtGraph *graph, size_t *num_nodes);
  OrtStatus *(*Graph_GetNodes)(const OrtGraph *graph, const OrtNode **nodes, size_t num_nodes);
  OrtStatus *(*Graph_GetParentNode)(const OrtGraph *graph, const OrtNode **node);
  OrtStatus *(*Graph_GetGraphView)(const OrtGraph *src_graph, const OrtNode **nodes,
                                   size_t num_nodes, OrtGraph **dst_graph);
  /* nodes and their attributes */
  OrtStatus *(*Node_GetId)(const OrtNode *node, size_t *node_id);
  OrtStatus *(*Node_GetName)(const OrtNode *node, const char **node_name);
  OrtStatus *(*Node_GetOperatorType)(const OrtNode *node, const char **operator_type);
  OrtStatus *(*Node_GetDomain)(const OrtNode *node, const char **domain_name);
  OrtStatus *(*Node_GetSinceVersion)(const OrtNode *node, int *since_version);
  OrtStatus *(*Node_GetNumInputs)(const OrtNode *node, size_t *num_inputs);
  OrtStatus *(*Node_GetInputs)(const OrtNode *node, const OrtValueInfo **inputs, size_t num_inputs);
  OrtStatus *(*Node_GetNumOutputs)(const OrtNode *node, size_t *num_outputs);
  OrtStatus *(*Node_GetOutputs)(const OrtNode *node, const OrtValueInfo **outputs,
                                size_t num_outputs);
  OrtStatus *(*Node_GetNumImplicitInputs)(const OrtNode *node, size_t *num_implicit_inputs);
  OrtStatus *(*Node_GetImplicitInputs)(const OrtNode *node, const OrtValueInfo **implicit_inputs,
                                       size_t num_implicit_inputs);
  OrtStatus *(*Node_GetNumAttributes)(const OrtNode *node, size_t *num_attributes);
  OrtStatus *(*Node_GetAttributes)(const OrtNode *node, const OrtOpAttr **attributes,
                                   size_t num_attributes);
  OrtStatus *(*Node_GetAttributeByName)(const OrtNode *node, const char *attribute_name,
                                        const OrtOpAttr **attribute);
  OrtStatus *(*OpAttr_GetTensorAttributeAsOrtValue)(const OrtOpAttr *attribute,
                                                    OrtValue **attr_tensor);
  OrtStatus *(*OpAttr_GetType)(const OrtOpAttr *attribute, OrtOpAttrType *type);
  OrtStatus *(*OpAttr_GetName)(const OrtOpAttr *attribute, const char **name);
  OrtStatus *(*Node_GetNumSubgraphs)(const OrtNode *node, size_t *num_subgraphs);
  OrtStatus *(*Node_GetSubgraphs)(const OrtNode *node, const OrtGraph **subgraphs,
                                  size_t num_subgraphs, const char **attribute_names);
  OrtStatus *(*Node_GetGraph)(const OrtNode *node, const OrtGraph **graph);
  OrtStatus *(*Node_GetEpName)(const OrtNode *node, const char **out);
  void *unused_369_372_[4];
  /* run configuration and EP device memory */
  const char *(*GetRunConfigEntry)(const OrtRunOptions *options, const char *config_key);
  const OrtMemoryInfo *(*EpDevice_MemoryInfo)(const OrtEpDevice *ep_device,
                                              OrtDeviceMemoryType memory_type);
  void *unused_375_377_[3];
  /* read-only tensor data and session options config */
  OrtStatus *(*GetTensorData)(const OrtValue *value, const void **out);
  OrtStatus *(*GetSessionOptionsConfigEntries)(const OrtSessionOptions *options,
                                               OrtKeyValuePairs **out);
  /* session input/output placement */
  OrtStatus *(*SessionGetMemoryInfoForInputs)(const OrtSession *session,
                                              const OrtMemoryInfo **inputs_memory_info,
                                              size_t num_inputs);
  OrtStatus *(*SessionGetMemoryInfoForOutputs)(const OrtSession *session,
                                               const OrtMemoryInfo **outputs_memory_info,
                                               size_t num_outputs);
  OrtStatus *(*SessionGetEpDeviceForInputs)(const OrtSession *session,
                                            const OrtEpDevice **inputs_ep_devices,
                                            size_t num_inputs);
  void *unused_383_389_[7];
  /* tensor shape presence and kernel info */
  bool (*TensorTypeAndShape_HasShape)(const OrtTensorTypeAndShapeInfo *info);
  OrtStatus *(*KernelInfo_GetConfigEntries)(const OrtKernelInfo *info, OrtKeyValuePairs **out);
  OrtStatus *(*KernelInfo_GetOperatorDomain)(const OrtKernelInfo *info, char *out, size_t *size);
  OrtStatus *(*KernelInfo_GetOperatorType)(const OrtKernelInfo *info, char *out, size_t *size);
  OrtStatus *(*KernelInfo_GetOperatorSinceVersion)(const OrtKernelInfo *info, int *since_version);
  void *unused_395_;
  /* session output placement; hardware device enumeration */
  OrtStatus *(*SessionGetEpDeviceForOutputs)(const OrtSession *session,
                                             const OrtEpDevice **outputs_ep_devices,
                                             size_t num_outputs);
  OrtStatus *(*GetNumHardwareDevices)(const OrtEnv *env, size_t *num_devices);
  OrtStatus *(*GetHardwareDevices)(const OrtEnv *env, const OrtHardwareDevice **devices,
                                   size_t num_devices);
  void *unused_399_406_[8];
  /* which EP ran each node (needs session.record_ep_graph_assignment_info=1) */
  OrtStatus *(*Session_GetEpGraphAssignmentInfo)(const OrtSession *session,
                                                 const OrtEpAssignedSubgraph *const **ep_subgraphs,
                                                 size_t *num_ep_subgraphs);
  OrtStatus *(*EpAssignedSubgraph_GetEpName)(const OrtEpAssignedSubgraph *ep_subgraph,
                                             const char **out);
  OrtStatus *(*EpAssignedSubgraph_GetNodes)(const OrtEpAssignedSubgraph *ep_subgraph,
                                            const OrtEpAssignedNode *const **ep_nodes,
                                            size_t *num_ep_nodes);
  OrtStatus *(*EpAssignedNode_GetName)(const OrtEpAssignedNode *ep_node, const char **out);
  OrtStatus *(*EpAssignedNode_GetDomain)(const OrtEpAssignedNode *ep_node, const char **out);
  OrtStatus *(*EpAssignedNode_GetOperatorType)(const OrtEpAssignedNode *ep_node, const char **out);
  void *unused_413_;
  /* borrowed tensor type and shape */
  OrtStatus *(*GetTensorElementTypeAndShapeDataReference)(const OrtValue *value,
                                                          ONNXTensorElementDataType *elem_type,
                                                          const int64_t **shape_data,
                                                          size_t *shape_data_count);
  void *unused_415_418_[4];
  /* session options getters */
  OrtStatus *(*GetMemPatternEnabled)(const OrtSessionOptions *options, int *out);
  OrtStatus *(*GetSessionExecutionMode)(const OrtSessionOptions *options, ExecutionMode *out);
  void *unused_421_424_[4];
};

/* Functions for execution-provider libraries: OrtApi.GetEpApi(). 74 slots in 1.30. */
struct OrtEpApi {
  /* EP devices */
  OrtStatus *(*CreateEpDevice)(OrtEpFactory *ep_factory, const OrtHardwareDevice *hardware_device,
                               const OrtKeyValuePairs *ep_metadata,
                               const OrtKeyValuePairs *ep_options, OrtEpDevice **ep_device);
  void (*ReleaseEpDevice)(OrtEpDevice *input);
  /* GetCapability: claiming nodes */
  OrtStatus *(*EpGraphSupportInfo_AddNodesToFuse)(OrtEpGraphSupportInfo *graph_support_info,
                                                  const OrtNode *const *nodes, size_t num_nodes,
                                                  const OrtNodeFusionOptions *node_fusion_options);
  OrtStatus *(*EpGraphSupportInfo_AddSingleNode)(OrtEpGraphSupportInfo *graph_support_info,
                                                 const OrtNode *node);
  /* compiled (fused) node context */
  const char *(*NodeComputeContext_NodeName)(const OrtNodeComputeContext *context);
  /* EP device allocators */
  OrtStatus *(*EpDevice_AddAllocatorInfo)(OrtEpDevice *ep_device,
                                          const OrtMemoryInfo *allocator_memory_info);
  /* memory devices */
  const OrtMemoryDevice *(*MemoryInfo_GetMemoryDevice)(const OrtMemoryInfo *memory_info);
  const OrtMemoryDevice *(*Value_GetMemoryDevice)(const OrtValue *value);
  bool (*MemoryDevice_AreEqual)(const OrtMemoryDevice *a, const OrtMemoryDevice *b);
  OrtMemoryInfoDeviceType (*MemoryDevice_GetDeviceType)(const OrtMemoryDevice *memory_device);
  OrtDeviceMemoryType (*MemoryDevice_GetMemoryType)(const OrtMemoryDevice *memory_device);
  uint32_t (*MemoryDevice_GetVendorId)(const OrtMemoryDevice *memory_device);
  uint32_t (*MemoryDevice_GetDeviceId)(const OrtMemoryDevice *memory_device);
  /* synchronisation streams */
  const OrtSyncStreamImpl *(*SyncStream_GetImpl)(const OrtSyncStream *stream);
  uint64_t (*SyncStream_GetSyncId)(const OrtSyncStream *stream);
  uint64_t (*GetSyncIdForLastWaitOnSyncStream)(const OrtSyncStream *producer_stream,
                                               const OrtSyncStream *consumer_stream);
  /* hardware devices */
  OrtStatus *(*CreateHardwareDevice)(OrtHardwareDeviceType type, uint32_t vendor_id,
                                     uint32_t device_id, const char *vendor_name,
                                     const OrtKeyValuePairs *metadata,
                                     OrtHardwareDevice **hardware_device);
  void (*ReleaseHardwareDevice)(OrtHardwareDevice *input);
  /* kernel registries */
  OrtStatus *(*CreateKernelRegistry)(OrtKernelRegistry **kernel_registry);
  void (*ReleaseKernelRegistry)(OrtKernelRegistry *input);
  OrtStatus *(*KernelRegistry_AddKernel)(OrtKernelRegistry *kernel_registry,
                                         const OrtKernelDef *kernel_def,
                                         OrtKernelCreateFunc kernel_create_func,
                                         void *kernel_create_func_state);
  /* kernel definition builders */
  OrtStatus *(*CreateKernelDefBuilder)(OrtKernelDefBuilder **kernel_def_builder_out);
  void (*ReleaseKernelDefBuilder)(OrtKernelDefBuilder *input);
  OrtStatus *(*KernelDefBuilder_SetOperatorType)(OrtKernelDefBuilder *kernel_def_builder,
                                                 const char *op_type);
  OrtStatus *(*KernelDefBuilder_SetDomain)(OrtKernelDefBuilder *kernel_def_builder,
                                           const char *domain);
  OrtStatus *(*KernelDefBuilder_SetSinceVersion)(OrtKernelDefBuilder *kernel_def_builder,
                                                 int since_version_start, int since_version_end);
  OrtStatus *(*KernelDefBuilder_SetExecutionProvider)(OrtKernelDefBuilder *kernel_def_builder,
                                                      const char *ep_name);
  OrtStatus *(*KernelDefBuilder_SetInputMemType)(OrtKernelDefBuilder *kernel_def_builder,
                                                 size_t input_index, OrtMemType mem_type);
  OrtStatus *(*KernelDefBuilder_SetOutputMemType)(OrtKernelDefBuilder *kernel_def_builder,
                                                  size_t output_index, OrtMemType mem_type);
  OrtStatus *(*KernelDefBuilder_AddTypeConstraint)(OrtKernelDefBuilder *kernel_def_builder,
                                                   const char *arg_name,
                                                   const OrtDataType *const *types,
                                                   size_t num_types);
  OrtStatus *(*KernelDefBuilder_AddInputOutputAliases)(OrtKernelDefBuilder *kernel_def_builder,
                                                       const int *input_indices,
                                                       const int *output_indices,
                                                       size_t num_io_indices);
  OrtStatus *(*KernelDefBuilder_AddInputOutputMutableAliases)(
      OrtKernelDefBuilder *kernel_def_builder, const int *input_indices, const int *output_indices,
      size_t num_io_indices);
  OrtStatus *(*KernelDefBuilder_Build)(OrtKernelDefBuilder *kernel_def_builder,
                                       OrtKernelDef **kernel_def_out);
  /* kernel definitions */
  void (*ReleaseKernelDef)(OrtKernelDef *input);
  const char *(*KernelDef_GetOperatorType)(const OrtKernelDef *kernel_def);
  const char *(*KernelDef_GetDomain)(const OrtKernelDef *kernel_def);
  OrtStatus *(*KernelDef_GetSinceVersion)(const OrtKernelDef *kernel_def, int *start_version,
                                          int *end_version);
  const char *(*KernelDef_GetExecutionProvider)(const OrtKernelDef *kernel_def);
  OrtStatus *(*KernelDef_GetInputMemType)(const OrtKernelDef *kernel_def, size_t input_index,
                                          OrtMemType *mem_type);
  OrtStatus *(*KernelDef_GetOutputMemType)(const OrtKernelDef *kernel_def, size_t output_index,
                                           OrtMemType *mem_type);
  /* data types, kernel look-up, shared pre-packed weights */
  OrtStatus *(*GetTensorDataType)(ONNXTensorElementDataType elem_type, const OrtDataType **out);
  OrtStatus *(*EpGraphSupportInfo_LookUpKernel)(OrtEpGraphSupportInfo *graph_support_info,
                                                const OrtNode *node,
                                                const OrtKernelDef **out_kernel_def);
  OrtStatus *(*SharedPrePackedWeightCache_StoreWeightData)(
      OrtSharedPrePackedWeightCache *prepacked_weight_cache, void **buffer_data_ptrs,
      size_t *buffer_data_sizes, size_t num_buffers);
  /* kernel info */
  OrtStatus *(*KernelInfo_GetEp)(const OrtKernelInfo *info, const OrtEp **ep);
  /* device/EP incompatibility details */
  OrtStatus *(*DeviceEpIncompatibilityDetails_SetDetails)(
      OrtDeviceEpIncompatibilityDetails *details, uint32_t reasons_bitmask, int32_t error_code,
      const char *notes);
  /* control-flow kernels */
  OrtStatus *(*CreateIfKernel)(const OrtKernelInfo *kernel_info, OrtKernelImpl **kernel_out);
  OrtStatus *(*CreateLoopKernel)(const OrtKernelInfo *kernel_info, OrtLoopKernelHelper *helper,
                                 OrtKernelImpl **kernel_out);
  OrtStatus *(*CreateScanKernel)(const OrtKernelInfo *kernel_info, OrtScanKernelHelper *helper,
                                 OrtKernelImpl **kernel_out);
  void (*ReleaseKernelImpl)(OrtKernelImpl *input);
  /* environment configuration */
  OrtStatus *(*GetEnvConfigEntries)(OrtKeyValuePairs **config_entries);
  /* operator schemas */
  OrtStatus *(*GetOpSchema)(const char *name, int max_inclusive_version, const char *domain,
                            OrtOpSchema **out_schema);
  void (*ReleaseOpSchema)(OrtOpSchema *input);
  OrtStatus *(*OpSchema_GetSinceVersion)(const OrtOpSchema *schema, int *out);
  OrtStatus *(*OpSchema_GetNumInputs)(const OrtOpSchema *schema, size_t *out);
  OrtStatus *(*OpSchema_GetInputName)(const OrtOpSchema *schema, size_t index, const char **out);
  OrtStatus *(*OpSchema_GetInputTypeConstraint)(const OrtOpSchema *schema, size_t index,
                                                const OrtOpSchemaTypeConstraint **out);
  OrtStatus *(*OpSchema_GetNumOutputs)(const OrtOpSchema *schema, size_t *out);
  OrtStatus *(*OpSchema_GetOutputName)(const OrtOpSchema *schema, size_t index, const char **out);
  OrtStatus *(*OpSchema_GetOutputTypeConstraint)(const OrtOpSchema *schema, size_t index,
                                                 const OrtOpSchemaTypeConstraint **out);
  OrtStatus *(*OpSchema_GetTypeConstraintCount)(const OrtOpSchema *schema, size_t *out);
  OrtStatus *(*OpSchema_GetTypeConstraint)(const OrtOpSchema *schema, size_t index,
                                           const OrtOpSchemaTypeConstraint **out);
  OrtStatus *(*OpSchemaTypeConstraint_GetTypeParamName)(
      const OrtOpSchemaTypeConstraint *type_constraint, const char **out);
  OrtStatus *(*OpSchemaTypeConstraint_GetAllowedTypes)(
      const OrtOpSchemaTypeConstraint *type_constraint, const char *const **out_types,
      size_t *num_types);
  OrtStatus *(*OpSchemaTypeConstraint_GetInputIndices)(
      const OrtOpSchemaTypeConstraint *type_constraint, const size_t **out_indices, size_t *count);
  OrtStatus *(*OpSchemaTypeConstraint_GetOutputIndices)(
      const OrtOpSchemaTypeConstraint *type_constraint, const size_t **out_indices, size_t *count);
  /* profiling events */
  OrtStatus *(*CreateProfilingEvent)(OrtProfilingEventCategory category, int32_t process_id,
                                     int32_t thread_id, const char *event_name,
                                     int64_t timestamp_us, int64_t duration_us,
                                     const char *const *arg_keys, const char *const *arg_values,
                                     size_t num_args, OrtProfilingEvent **out);
  void (*ReleaseProfilingEvent)(OrtProfilingEvent *input);
  OrtStatus *(*ProfilingEvent_GetCategory)(const OrtProfilingEvent *event,
                                           OrtProfilingEventCategory *out);
  OrtStatus *(*ProfilingEvent_GetName)(const OrtProfilingEvent *event, const char **out);
  OrtStatus *(*ProfilingEvent_GetTimestampUs)(const OrtProfilingEvent *event, int64_t *out);
  OrtStatus *(*ProfilingEvent_GetDurationUs)(const OrtProfilingEvent *event, int64_t *out);
  OrtStatus *(*ProfilingEvent_GetArgValue)(const OrtProfilingEvent *event, const char *key,
                                           const char **out);
  OrtStatus *(*ProfilingEventsContainer_AddEvents)(OrtProfilingEventsContainer *events_container,
                                                   const OrtProfilingEvent *const *events,
                                                   size_t num_events);
  /* weightless models */
  OrtStatus *(*SessionOptionsGetWeightlessSourceModelBuffer)(
      const OrtSessionOptions *session_options, const void **source_model_data,
      size_t *source_model_data_length);
};

/* An execution provider instance. The EP library fills it (zeroed first); ORT calls it. */
struct OrtEp {
  /* version the EP was built against (ORT_API_VERSION) */
  uint32_t ort_version_supported;
  /* identity, capability and compilation */
  const char *(*GetName)(const OrtEp *this_ptr);
  OrtStatus *(*GetCapability)(OrtEp *this_ptr, const OrtGraph *graph,
                              OrtEpGraphSupportInfo *graph_support_info);
  OrtStatus *(*Compile)(OrtEp *this_ptr, const OrtGraph **graphs, const OrtNode **fused_nodes,
                        size_t count, OrtNodeComputeInfo **node_compute_infos,
                        OrtNode **ep_context_nodes);
  void (*ReleaseNodeComputeInfos)(OrtEp *this_ptr, OrtNodeComputeInfo **node_compute_infos,
                                  size_t num_node_compute_infos);
  /* data layout */
  OrtStatus *(*GetPreferredDataLayout)(OrtEp *this_ptr, OrtEpDataLayout *preferred_data_layout);
  OrtStatus *(*ShouldConvertDataLayoutForOp)(OrtEp *this_ptr, const char *domain,
                                             const char *op_type,
                                             OrtEpDataLayout target_data_layout,
                                             int *should_convert);
  /* options and run hooks */
  OrtStatus *(*SetDynamicOptions)(OrtEp *this_ptr, const char *const *option_keys,
                                  const char *const *option_values, size_t num_options);
  OrtStatus *(*OnRunStart)(OrtEp *this_ptr, const OrtRunOptions *run_options);
  OrtStatus *(*OnRunEnd)(OrtEp *this_ptr, const OrtRunOptions *run_options, bool sync_stream);
  /* allocators and streams */
  OrtStatus *(*CreateAllocator)(OrtEp *this_ptr, const OrtMemoryInfo *memory_info,
                                OrtAllocator **allocator);
  OrtStatus *(*CreateSyncStreamForDevice)(OrtEp *this_ptr, const OrtMemoryDevice *memory_device,
                                          OrtSyncStreamImpl **stream);
  /* compiled-model compatibility, kernel registry, concurrency */
  const char *(*GetCompiledModelCompatibilityInfo)(OrtEp *this_ptr, const OrtGraph *graph);
  OrtStatus *(*GetKernelRegistry)(OrtEp *this_ptr, const OrtKernelRegistry **kernel_registry);
  OrtStatus *(*IsConcurrentRunSupported)(OrtEp *this_ptr, bool *is_supported);
  OrtStatus *(*Sync)(OrtEp *this_ptr);
  /* profiling */
  OrtStatus *(*CreateProfiler)(OrtEp *this_ptr, OrtEpProfilerImpl **profiler);
  /* graph capture */
  bool (*IsGraphCaptureEnabled)(const OrtEp *this_ptr);
  bool (*IsGraphCaptured)(const OrtEp *this_ptr, int graph_annotation_id);
  OrtStatus *(*ReplayGraph)(OrtEp *this_ptr, int graph_annotation_id);
  OrtGraphCaptureNodeAssignmentPolicy (*GetGraphCaptureNodeAssignmentPolicy)(const OrtEp *this_ptr);
  /* resources, session end, memory device */
  OrtStatus *(*GetAvailableResource)(const OrtEp *this_ptr, OrtResourceCount *available);
  OrtStatus *(*OnSessionInitializationEnd)(OrtEp *this_ptr);
  OrtStatus *(*GetDefaultMemoryDevice)(const OrtEp *this_ptr, const OrtMemoryDevice **device);
  /* graph capture release; weightless models */
  OrtStatus *(*ReleaseCapturedGraph)(OrtEp *this_ptr, int graph_annotation_id);
  OrtStatus *(*GetWeightlessSupport)(const OrtEp *this_ptr, OrtWeightlessSupport *support);
};

/* Creates EP instances. The EP library's CreateEpFactories returns these, filled whole. */
struct OrtEpFactory {
  /* version the factory was built against (ORT_API_VERSION) */
  uint32_t ort_version_supported;
  /* identity and devices */
  const char *(*GetName)(const OrtEpFactory *this_ptr);
  const char *(*GetVendor)(const OrtEpFactory *this_ptr);
  OrtStatus *(*GetSupportedDevices)(OrtEpFactory *this_ptr, const OrtHardwareDevice *const *devices,
                                    size_t num_devices, OrtEpDevice **ep_devices,
                                    size_t max_ep_devices, size_t *num_ep_devices);
  /* EP instances */
  OrtStatus *(*CreateEp)(OrtEpFactory *this_ptr, const OrtHardwareDevice *const *devices,
                         const OrtKeyValuePairs *const *ep_metadata_pairs, size_t num_devices,
                         const OrtSessionOptions *session_options, const OrtLogger *logger,
                         OrtEp **ep);
  void (*ReleaseEp)(OrtEpFactory *this_ptr, OrtEp *ep);
  /* vendor, version, compiled-model compatibility */
  uint32_t (*GetVendorId)(const OrtEpFactory *this_ptr);
  const char *(*GetVersion)(const OrtEpFactory *this_ptr);
  OrtStatus *(*ValidateCompiledModelCompatibilityInfo)(
      OrtEpFactory *this_ptr, const OrtHardwareDevice *const *devices, size_t num_devices,
      const char *compatibility_info, OrtCompiledModelCompatibility *model_compatibility);
  /* allocators, data transfer, streams */
  OrtStatus *(*CreateAllocator)(OrtEpFactory *this_ptr, const OrtMemoryInfo *memory_info,
                                const OrtKeyValuePairs *allocator_options,
                                OrtAllocator **allocator);
  void (*ReleaseAllocator)(OrtEpFactory *this_ptr, OrtAllocator *allocator);
  OrtStatus *(*CreateDataTransfer)(OrtEpFactory *this_ptr, OrtDataTransferImpl **data_transfer);
  bool (*IsStreamAware)(const OrtEpFactory *this_ptr);
  OrtStatus *(*CreateSyncStreamForDevice)(OrtEpFactory *this_ptr,
                                          const OrtMemoryDevice *memory_device,
                                          const OrtKeyValuePairs *stream_options,
                                          OrtSyncStreamImpl **stream);
  /* device incompatibility, external resources */
  OrtStatus *(*GetHardwareDeviceIncompatibilityDetails)(OrtEpFactory *this_ptr,
                                                        const OrtHardwareDevice *hw,
                                                        OrtDeviceEpIncompatibilityDetails *details);
  OrtStatus *(*CreateExternalResourceImporterForDevice)(
      OrtEpFactory *this_ptr, const OrtEpDevice *ep_device,
      OrtExternalResourceImporterImpl **out_importer);
  /* custom-op domains */
  OrtStatus *(*GetNumCustomOpDomains)(OrtEpFactory *this_ptr, size_t *num_domains);
  OrtStatus *(*GetCustomOpDomains)(OrtEpFactory *this_ptr, OrtCustomOpDomain **domains,
                                   size_t num_domains);
  /* graphics interop */
  OrtStatus *(*InitGraphicsInterop)(OrtEpFactory *this_ptr, const OrtEpDevice *ep_device,
                                    const OrtGraphicsInteropConfig *config);
  OrtStatus *(*DeinitGraphicsInterop)(OrtEpFactory *this_ptr, const OrtEpDevice *ep_device);
  /* model selection */
  OrtStatus *(*SelectBestModelCandidate)(OrtEpFactory *this_ptr, const OrtHardwareDevice *device,
                                         const OrtKeyValuePairs *const *candidates,
                                         size_t num_candidates,
                                         const OrtSessionOptions *session_options,
                                         size_t *selected_index);
};

/* How to run one fused node; OrtEp.Compile returns one per fused node. */
struct OrtNodeComputeInfo {
  /* version (ORT_API_VERSION) */
  uint32_t ort_version_supported;
  /* per-node state and compute */
  OrtStatus *(*CreateState)(OrtNodeComputeInfo *this_ptr, OrtNodeComputeContext *compute_context,
                            void **compute_state);
  OrtStatus *(*Compute)(OrtNodeComputeInfo *this_ptr, void *compute_state,
                        OrtKernelContext *kernel_context);
  void (*ReleaseState)(OrtNodeComputeInfo *this_ptr, void *compute_state);
};

/* ---- What a plugin EP library exports ------------------------------------------------------ */

/* Exported as CreateEpFactories: fill up to max_factories factories, say how many. */
typedef OrtStatus *(*CreateEpApiFactoriesFn)(const char *registered_name,
                                             const OrtApiBase *ort_api_base,
                                             const OrtLogger *default_logger,
                                             OrtEpFactory **factories, size_t max_factories,
                                             size_t *num_factories);
/* Exported as ReleaseEpFactory: called once per factory when the library is unregistered. */
typedef OrtStatus *(*ReleaseEpApiFactoryFn)(OrtEpFactory *factory);

/* ---- Layout tables -------------------------------------------------------------------------
 * X(struct, member, slot) for every typed function-pointer member (slot = byte offset / 8),
 * X(struct, member, byte offset) for data members, X(struct, size in bytes) for whole structs.
 * The asserts below use them; the layout test walks them by name against ORT's own layout
 * (all but OrtAllocator's, which that layout does not list: its order is version, Alloc, Free,
 * Info, Reserve, GetStats, AllocOnStream, Shrink, as in ORT 1.30). */
/* clang-format off */
#define ACTX_ORT_API_BASE_SLOTS(X)                                                                 \
  X(OrtApiBase, GetApi, 0) X(OrtApiBase, GetVersionString, 1)

#define ACTX_ORT_API_SLOTS(X)                                                                      \
  X(OrtApi, CreateStatus, 0) X(OrtApi, GetErrorCode, 1) X(OrtApi, GetErrorMessage, 2)              \
  X(OrtApi, CreateEnv, 3) X(OrtApi, CreateEnvWithCustomLogger, 4) X(OrtApi, CreateSession, 7)      \
  X(OrtApi, CreateSessionFromArray, 8) X(OrtApi, Run, 9) X(OrtApi, CreateSessionOptions, 10)       \
  X(OrtApi, SetOptimizedModelFilePath, 11) X(OrtApi, CloneSessionOptions, 12)                      \
  X(OrtApi, SetSessionExecutionMode, 13) X(OrtApi, EnableProfiling, 14)                            \
  X(OrtApi, DisableProfiling, 15) X(OrtApi, EnableMemPattern, 16)                                  \
  X(OrtApi, DisableMemPattern, 17) X(OrtApi, EnableCpuMemArena, 18)                                \
  X(OrtApi, DisableCpuMemArena, 19) X(OrtApi, SetSessionLogId, 20)                                 \
  X(OrtApi, SetSessionLogVerbosityLevel, 21) X(OrtApi, SetSessionLogSeverityLevel, 22)             \
  X(OrtApi, SetSessionGraphOptimizationLevel, 23) X(OrtApi, SetIntraOpNumThreads, 24)              \
  X(OrtApi, SetInterOpNumThreads, 25) X(OrtApi, SessionGetInputCount, 30)                          \
  X(OrtApi, SessionGetOutputCount, 31) X(OrtApi, SessionGetOverridableInitializerCount, 32)        \
  X(OrtApi, SessionGetInputTypeInfo, 33) X(OrtApi, SessionGetOutputTypeInfo, 34)                   \
  X(OrtApi, SessionGetOverridableInitializerTypeInfo, 35) X(OrtApi, SessionGetInputName, 36)       \
  X(OrtApi, SessionGetOutputName, 37) X(OrtApi, SessionGetOverridableInitializerName, 38)          \
  X(OrtApi, CreateRunOptions, 39) X(OrtApi, RunOptionsSetRunLogVerbosityLevel, 40)                 \
  X(OrtApi, RunOptionsSetRunLogSeverityLevel, 41) X(OrtApi, RunOptionsSetRunTag, 42)               \
  X(OrtApi, RunOptionsGetRunLogVerbosityLevel, 43)                                                 \
  X(OrtApi, RunOptionsGetRunLogSeverityLevel, 44) X(OrtApi, RunOptionsGetRunTag, 45)               \
  X(OrtApi, RunOptionsSetTerminate, 46) X(OrtApi, RunOptionsUnsetTerminate, 47)                    \
  X(OrtApi, CreateTensorAsOrtValue, 48) X(OrtApi, CreateTensorWithDataAsOrtValue, 49)              \
  X(OrtApi, IsTensor, 50) X(OrtApi, GetTensorMutableData, 51)                                      \
  X(OrtApi, CastTypeInfoToTensorInfo, 55) X(OrtApi, GetOnnxTypeFromTypeInfo, 56)                   \
  X(OrtApi, CreateTensorTypeAndShapeInfo, 57) X(OrtApi, SetTensorElementType, 58)                  \
  X(OrtApi, SetDimensions, 59) X(OrtApi, GetTensorElementType, 60)                                 \
  X(OrtApi, GetDimensionsCount, 61) X(OrtApi, GetDimensions, 62)                                   \
  X(OrtApi, GetSymbolicDimensions, 63) X(OrtApi, GetTensorShapeElementCount, 64)                   \
  X(OrtApi, GetTensorTypeAndShape, 65) X(OrtApi, GetTypeInfo, 66) X(OrtApi, GetValueType, 67)      \
  X(OrtApi, CreateMemoryInfo, 68) X(OrtApi, CreateCpuMemoryInfo, 69)                               \
  X(OrtApi, CompareMemoryInfo, 70) X(OrtApi, MemoryInfoGetName, 71)                                \
  X(OrtApi, MemoryInfoGetId, 72) X(OrtApi, MemoryInfoGetMemType, 73)                               \
  X(OrtApi, MemoryInfoGetType, 74) X(OrtApi, AllocatorAlloc, 75) X(OrtApi, AllocatorFree, 76)      \
  X(OrtApi, AllocatorGetInfo, 77) X(OrtApi, GetAllocatorWithDefaultOptions, 78)                    \
  X(OrtApi, AddFreeDimensionOverride, 79) X(OrtApi, KernelInfoGetAttribute_float, 85)              \
  X(OrtApi, KernelInfoGetAttribute_int64, 86) X(OrtApi, KernelInfoGetAttribute_string, 87)         \
  X(OrtApi, KernelContext_GetInputCount, 88) X(OrtApi, KernelContext_GetOutputCount, 89)           \
  X(OrtApi, KernelContext_GetInput, 90) X(OrtApi, KernelContext_GetOutput, 91)                     \
  X(OrtApi, ReleaseEnv, 92) X(OrtApi, ReleaseStatus, 93) X(OrtApi, ReleaseMemoryInfo, 94)          \
  X(OrtApi, ReleaseSession, 95) X(OrtApi, ReleaseValue, 96) X(OrtApi, ReleaseRunOptions, 97)       \
  X(OrtApi, ReleaseTypeInfo, 98) X(OrtApi, ReleaseTensorTypeAndShapeInfo, 99)                      \
  X(OrtApi, ReleaseSessionOptions, 100) X(OrtApi, SessionEndProfiling, 110)                        \
  X(OrtApi, AddFreeDimensionOverrideByName, 124) X(OrtApi, GetAvailableProviders, 125)             \
  X(OrtApi, ReleaseAvailableProviders, 126) X(OrtApi, AddSessionConfigEntry, 130)                  \
  X(OrtApi, CreateAllocator, 131) X(OrtApi, ReleaseAllocator, 132)                                 \
  X(OrtApi, AddInitializer, 150)                                                                   \
  X(OrtApi, KernelInfoGetAttributeArray_float, 162)                                                \
  X(OrtApi, KernelInfoGetAttributeArray_int64, 163)                                                \
  X(OrtApi, AddRunConfigEntry, 165) X(OrtApi, HasValue, 192)                                       \
  X(OrtApi, GetTensorMemoryInfo, 194) X(OrtApi, CreateOpAttr, 211) X(OrtApi, ReleaseOpAttr, 212)   \
  X(OrtApi, SessionOptionsAppendExecutionProvider, 216) X(OrtApi, MemoryInfoGetDeviceType, 225)    \
  X(OrtApi, UpdateEnvWithCustomLogLevel, 226) X(OrtApi, KernelInfo_GetInputCount, 230)             \
  X(OrtApi, KernelInfo_GetOutputCount, 231) X(OrtApi, KernelInfo_GetInputName, 232)                \
  X(OrtApi, KernelInfo_GetOutputName, 233) X(OrtApi, KernelInfo_GetInputTypeInfo, 234)             \
  X(OrtApi, KernelInfo_GetOutputTypeInfo, 235) X(OrtApi, KernelInfoGetAttribute_tensor, 236)       \
  X(OrtApi, HasSessionConfigEntry, 237) X(OrtApi, GetSessionConfigEntry, 238)                      \
  X(OrtApi, KernelInfo_GetNodeName, 244) X(OrtApi, KernelInfo_GetLogger, 245)                      \
  X(OrtApi, KernelContext_GetLogger, 246) X(OrtApi, Logger_LogMessage, 247)                        \
  X(OrtApi, Logger_GetLoggingSeverityLevel, 248) X(OrtApi, KernelContext_GetAllocator, 253)        \
  X(OrtApi, GetBuildInfoString, 254) X(OrtApi, SetUserLoggingFunction, 266)                        \
  X(OrtApi, ReadOpAttr, 272) X(OrtApi, SetDeterministicCompute, 273)                               \
  X(OrtApi, KernelContext_ParallelFor, 274) X(OrtApi, KernelContext_GetScratchBuffer, 277)         \
  X(OrtApi, KernelInfoGetAllocator, 278) X(OrtApi, ReleaseValueInfo, 285)                          \
  X(OrtApi, ReleaseNode, 286) X(OrtApi, ReleaseGraph, 287) X(OrtApi, ReleaseModel, 288)            \
  X(OrtApi, GetValueInfoName, 289) X(OrtApi, GetValueInfoTypeInfo, 290)                            \
  X(OrtApi, CreateTensorWithDataAndDeleterAsOrtValue, 292) X(OrtApi, CreateKeyValuePairs, 295)     \
  X(OrtApi, AddKeyValuePair, 296) X(OrtApi, GetKeyValue, 297) X(OrtApi, GetKeyValuePairs, 298)     \
  X(OrtApi, RemoveKeyValuePair, 299) X(OrtApi, ReleaseKeyValuePairs, 300)                          \
  X(OrtApi, RegisterExecutionProviderLibrary, 301)                                                 \
  X(OrtApi, UnregisterExecutionProviderLibrary, 302) X(OrtApi, GetEpDevices, 303)                  \
  X(OrtApi, SessionOptionsAppendExecutionProvider_V2, 304)                                         \
  X(OrtApi, SessionOptionsSetEpSelectionPolicy, 305)                                               \
  X(OrtApi, SessionOptionsSetEpSelectionPolicyDelegate, 306) X(OrtApi, HardwareDevice_Type, 307)   \
  X(OrtApi, HardwareDevice_VendorId, 308) X(OrtApi, HardwareDevice_Vendor, 309)                    \
  X(OrtApi, HardwareDevice_DeviceId, 310) X(OrtApi, HardwareDevice_Metadata, 311)                  \
  X(OrtApi, EpDevice_EpName, 312) X(OrtApi, EpDevice_EpVendor, 313)                                \
  X(OrtApi, EpDevice_EpMetadata, 314) X(OrtApi, EpDevice_EpOptions, 315)                           \
  X(OrtApi, EpDevice_Device, 316) X(OrtApi, GetEpApi, 317) X(OrtApi, GetTensorSizeInBytes, 318)    \
  X(OrtApi, AllocatorGetStats, 319) X(OrtApi, CreateMemoryInfo_V2, 320)                            \
  X(OrtApi, MemoryInfoGetDeviceMemType, 321) X(OrtApi, MemoryInfoGetVendorId, 322)                 \
  X(OrtApi, ValueInfo_GetValueProducer, 323) X(OrtApi, ValueInfo_GetValueNumConsumers, 324)        \
  X(OrtApi, ValueInfo_GetValueConsumers, 325) X(OrtApi, ValueInfo_GetInitializerValue, 326)        \
  X(OrtApi, ValueInfo_GetExternalInitializerInfo, 327)                                             \
  X(OrtApi, ValueInfo_IsRequiredGraphInput, 328) X(OrtApi, ValueInfo_IsOptionalGraphInput, 329)    \
  X(OrtApi, ValueInfo_IsGraphOutput, 330) X(OrtApi, ValueInfo_IsConstantInitializer, 331)          \
  X(OrtApi, ValueInfo_IsFromOuterScope, 332) X(OrtApi, Graph_GetName, 333)                         \
  X(OrtApi, Graph_GetModelPath, 334) X(OrtApi, Graph_GetOnnxIRVersion, 335)                        \
  X(OrtApi, Graph_GetNumOperatorSets, 336) X(OrtApi, Graph_GetOperatorSets, 337)                   \
  X(OrtApi, Graph_GetNumInputs, 338) X(OrtApi, Graph_GetInputs, 339)                               \
  X(OrtApi, Graph_GetNumOutputs, 340) X(OrtApi, Graph_GetOutputs, 341)                             \
  X(OrtApi, Graph_GetNumInitializers, 342) X(OrtApi, Graph_GetInitializers, 343)                   \
  X(OrtApi, Graph_GetNumNodes, 344) X(OrtApi, Graph_GetNodes, 345)                                 \
  X(OrtApi, Graph_GetParentNode, 346) X(OrtApi, Graph_GetGraphView, 347)                           \
  X(OrtApi, Node_GetId, 348) X(OrtApi, Node_GetName, 349) X(OrtApi, Node_GetOperatorType, 350)     \
  X(OrtApi, Node_GetDomain, 351) X(OrtApi, Node_GetSinceVersion, 352)                              \
  X(OrtApi, Node_GetNumInputs, 353) X(OrtApi, Node_GetInputs, 354)                                 \
  X(OrtApi, Node_GetNumOutputs, 355) X(OrtApi, Node_GetOutputs, 356)                               \
  X(OrtApi, Node_GetNumImplicitInputs, 357) X(OrtApi, Node_GetImplicitInputs, 358)                 \
  X(OrtApi, Node_GetNumAttributes, 359) X(OrtApi, Node_GetAttributes, 360)                         \
  X(OrtApi, Node_GetAttributeByName, 361) X(OrtApi, OpAttr_GetTensorAttributeAsOrtValue, 362)      \
  X(OrtApi, OpAttr_GetType, 363) X(OrtApi, OpAttr_GetName, 364)                                    \
  X(OrtApi, Node_GetNumSubgraphs, 365) X(OrtApi, Node_GetSubgraphs, 366)                           \
  X(OrtApi, Node_GetGraph, 367) X(OrtApi, Node_GetEpName, 368) X(OrtApi, GetRunConfigEntry, 373)   \
  X(OrtApi, EpDevice_MemoryInfo, 374) X(OrtApi, GetTensorData, 378)                                \
  X(OrtApi, GetSessionOptionsConfigEntries, 379) X(OrtApi, SessionGetMemoryInfoForInputs, 380)     \
  X(OrtApi, SessionGetMemoryInfoForOutputs, 381) X(OrtApi, SessionGetEpDeviceForInputs, 382)       \
  X(OrtApi, TensorTypeAndShape_HasShape, 390) X(OrtApi, KernelInfo_GetConfigEntries, 391)          \
  X(OrtApi, KernelInfo_GetOperatorDomain, 392) X(OrtApi, KernelInfo_GetOperatorType, 393)          \
  X(OrtApi, KernelInfo_GetOperatorSinceVersion, 394)                                               \
  X(OrtApi, SessionGetEpDeviceForOutputs, 396) X(OrtApi, GetNumHardwareDevices, 397)               \
  X(OrtApi, GetHardwareDevices, 398) X(OrtApi, Session_GetEpGraphAssignmentInfo, 407)              \
  X(OrtApi, EpAssignedSubgraph_GetEpName, 408) X(OrtApi, EpAssignedSubgraph_GetNodes, 409)         \
  X(OrtApi, EpAssignedNode_GetName, 410) X(OrtApi, EpAssignedNode_GetDomain, 411)                  \
  X(OrtApi, EpAssignedNode_GetOperatorType, 412)                                                   \
  X(OrtApi, GetTensorElementTypeAndShapeDataReference, 414) X(OrtApi, GetMemPatternEnabled, 419)   \
  X(OrtApi, GetSessionExecutionMode, 420)

#define ACTX_ORT_EP_API_SLOTS(X)                                                                   \
  X(OrtEpApi, CreateEpDevice, 0) X(OrtEpApi, ReleaseEpDevice, 1)                                   \
  X(OrtEpApi, EpGraphSupportInfo_AddNodesToFuse, 2)                                                \
  X(OrtEpApi, EpGraphSupportInfo_AddSingleNode, 3) X(OrtEpApi, NodeComputeContext_NodeName, 4)     \
  X(OrtEpApi, EpDevice_AddAllocatorInfo, 5) X(OrtEpApi, MemoryInfo_GetMemoryDevice, 6)             \
  X(OrtEpApi, Value_GetMemoryDevice, 7) X(OrtEpApi, MemoryDevice_AreEqual, 8)                      \
  X(OrtEpApi, MemoryDevice_GetDeviceType, 9) X(OrtEpApi, MemoryDevice_GetMemoryType, 10)           \
  X(OrtEpApi, MemoryDevice_GetVendorId, 11) X(OrtEpApi, MemoryDevice_GetDeviceId, 12)              \
  X(OrtEpApi, SyncStream_GetImpl, 13) X(OrtEpApi, SyncStream_GetSyncId, 14)                        \
  X(OrtEpApi, GetSyncIdForLastWaitOnSyncStream, 15) X(OrtEpApi, CreateHardwareDevice, 16)          \
  X(OrtEpApi, ReleaseHardwareDevice, 17) X(OrtEpApi, CreateKernelRegistry, 18)                     \
  X(OrtEpApi, ReleaseKernelRegistry, 19) X(OrtEpApi, KernelRegistry_AddKernel, 20)                 \
  X(OrtEpApi, CreateKernelDefBuilder, 21) X(OrtEpApi, ReleaseKernelDefBuilder, 22)                 \
  X(OrtEpApi, KernelDefBuilder_SetOperatorType, 23) X(OrtEpApi, KernelDefBuilder_SetDomain, 24)    \
  X(OrtEpApi, KernelDefBuilder_SetSinceVersion, 25)                                                \
  X(OrtEpApi, KernelDefBuilder_SetExecutionProvider, 26)                                           \
  X(OrtEpApi, KernelDefBuilder_SetInputMemType, 27)                                                \
  X(OrtEpApi, KernelDefBuilder_SetOutputMemType, 28)                                               \
  X(OrtEpApi, KernelDefBuilder_AddTypeConstraint, 29)                                              \
  X(OrtEpApi, KernelDefBuilder_AddInputOutputAliases, 30)                                          \
  X(OrtEpApi, KernelDefBuilder_AddInputOutputMutableAliases, 31)                                   \
  X(OrtEpApi, KernelDefBuilder_Build, 32) X(OrtEpApi, ReleaseKernelDef, 33)                        \
  X(OrtEpApi, KernelDef_GetOperatorType, 34) X(OrtEpApi, KernelDef_GetDomain, 35)                  \
  X(OrtEpApi, KernelDef_GetSinceVersion, 36) X(OrtEpApi, KernelDef_GetExecutionProvider, 37)       \
  X(OrtEpApi, KernelDef_GetInputMemType, 38) X(OrtEpApi, KernelDef_GetOutputMemType, 39)           \
  X(OrtEpApi, GetTensorDataType, 40) X(OrtEpApi, EpGraphSupportInfo_LookUpKernel, 41)              \
  X(OrtEpApi, SharedPrePackedWeightCache_StoreWeightData, 42) X(OrtEpApi, KernelInfo_GetEp, 43)    \
  X(OrtEpApi, DeviceEpIncompatibilityDetails_SetDetails, 44) X(OrtEpApi, CreateIfKernel, 45)       \
  X(OrtEpApi, CreateLoopKernel, 46) X(OrtEpApi, CreateScanKernel, 47)                              \
  X(OrtEpApi, ReleaseKernelImpl, 48) X(OrtEpApi, GetEnvConfigEntries, 49)                          \
  X(OrtEpApi, GetOpSchema, 50) X(OrtEpApi, ReleaseOpSchema, 51)                                    \
  X(OrtEpApi, OpSchema_GetSinceVersion, 52) X(OrtEpApi, OpSchema_GetNumInputs, 53)                 \
  X(OrtEpApi, OpSchema_GetInputName, 54) X(OrtEpApi, OpSchema_GetInputTypeConstraint, 55)          \
  X(OrtEpApi, OpSchema_GetNumOutputs, 56) X(OrtEpApi, OpSchema_GetOutputName, 57)                  \
  X(OrtEpApi, OpSchema_GetOutputTypeConstraint, 58)                                                \
  X(OrtEpApi, OpSchema_GetTypeConstraintCount, 59) X(OrtEpApi, OpSchema_GetTypeConstraint, 60)     \
  X(OrtEpApi, OpSchemaTypeConstraint_GetTypeParamName, 61)                                         \
  X(OrtEpApi, OpSchemaTypeConstraint_GetAllowedTypes, 62)                                          \
  X(OrtEpApi, OpSchemaTypeConstraint_GetInputIndices, 63)                                          \
  X(OrtEpApi, OpSchemaTypeConstraint_GetOutputIndices, 64) X(OrtEpApi, CreateProfilingEvent, 65)   \
  X(OrtEpApi, ReleaseProfilingEvent, 66) X(OrtEpApi, ProfilingEvent_GetCategory, 67)               \
  X(OrtEpApi, ProfilingEvent_GetName, 68) X(OrtEpApi, ProfilingEvent_GetTimestampUs, 69)           \
  X(OrtEpApi, ProfilingEvent_GetDurationUs, 70) X(OrtEpApi, ProfilingEvent_GetArgValue, 71)        \
  X(OrtEpApi, ProfilingEventsContainer_AddEvents, 72)                                              \
  X(OrtEpApi, SessionOptionsGetWeightlessSourceModelBuffer, 73)

#define ACTX_ORT_EP_SLOTS(X)                                                                       \
  X(OrtEp, GetName, 1) X(OrtEp, GetCapability, 2) X(OrtEp, Compile, 3)                             \
  X(OrtEp, ReleaseNodeComputeInfos, 4) X(OrtEp, GetPreferredDataLayout, 5)                         \
  X(OrtEp, ShouldConvertDataLayoutForOp, 6) X(OrtEp, SetDynamicOptions, 7)                         \
  X(OrtEp, OnRunStart, 8) X(OrtEp, OnRunEnd, 9) X(OrtEp, CreateAllocator, 10)                      \
  X(OrtEp, CreateSyncStreamForDevice, 11) X(OrtEp, GetCompiledModelCompatibilityInfo, 12)          \
  X(OrtEp, GetKernelRegistry, 13) X(OrtEp, IsConcurrentRunSupported, 14) X(OrtEp, Sync, 15)        \
  X(OrtEp, CreateProfiler, 16) X(OrtEp, IsGraphCaptureEnabled, 17) X(OrtEp, IsGraphCaptured, 18)   \
  X(OrtEp, ReplayGraph, 19) X(OrtEp, GetGraphCaptureNodeAssignmentPolicy, 20)                      \
  X(OrtEp, GetAvailableResource, 21) X(OrtEp, OnSessionInitializationEnd, 22)                      \
  X(OrtEp, GetDefaultMemoryDevice, 23) X(OrtEp, ReleaseCapturedGraph, 24)                          \
  X(OrtEp, GetWeightlessSupport, 25)

#define ACTX_ORT_EP_FACTORY_SLOTS(X)                                                               \
  X(OrtEpFactory, GetName, 1) X(OrtEpFactory, GetVendor, 2)                                        \
  X(OrtEpFactory, GetSupportedDevices, 3) X(OrtEpFactory, CreateEp, 4)                             \
  X(OrtEpFactory, ReleaseEp, 5) X(OrtEpFactory, GetVendorId, 6) X(OrtEpFactory, GetVersion, 7)     \
  X(OrtEpFactory, ValidateCompiledModelCompatibilityInfo, 8) X(OrtEpFactory, CreateAllocator, 9)   \
  X(OrtEpFactory, ReleaseAllocator, 10) X(OrtEpFactory, CreateDataTransfer, 11)                    \
  X(OrtEpFactory, IsStreamAware, 12) X(OrtEpFactory, CreateSyncStreamForDevice, 13)                \
  X(OrtEpFactory, GetHardwareDeviceIncompatibilityDetails, 14)                                     \
  X(OrtEpFactory, CreateExternalResourceImporterForDevice, 15)                                     \
  X(OrtEpFactory, GetNumCustomOpDomains, 16) X(OrtEpFactory, GetCustomOpDomains, 17)               \
  X(OrtEpFactory, InitGraphicsInterop, 18) X(OrtEpFactory, DeinitGraphicsInterop, 19)              \
  X(OrtEpFactory, SelectBestModelCandidate, 20)

#define ACTX_ORT_NODE_COMPUTE_INFO_SLOTS(X)                                                        \
  X(OrtNodeComputeInfo, CreateState, 1) X(OrtNodeComputeInfo, Compute, 2)                          \
  X(OrtNodeComputeInfo, ReleaseState, 3)

#define ACTX_ORT_KERNEL_IMPL_SLOTS(X)                                                              \
  X(OrtKernelImpl, Compute, 1) X(OrtKernelImpl, Release, 2) X(OrtKernelImpl, PrePackWeight, 3)     \
  X(OrtKernelImpl, SetSharedPrePackedWeight, 4)

#define ACTX_ORT_ALLOCATOR_SLOTS(X)                                                                \
  X(OrtAllocator, Alloc, 1) X(OrtAllocator, Free, 2) X(OrtAllocator, Info, 3)                      \
  X(OrtAllocator, Reserve, 4) X(OrtAllocator, GetStats, 5) X(OrtAllocator, AllocOnStream, 6)       \
  X(OrtAllocator, Shrink, 7)

#define ACTX_ORT_DATA_FIELDS(X)                                                                    \
  X(OrtEp, ort_version_supported, 0) X(OrtEpFactory, ort_version_supported, 0)                     \
  X(OrtNodeComputeInfo, ort_version_supported, 0)                                                  \
  X(OrtNodeFusionOptions, ort_version_supported, 0)                                                \
  X(OrtNodeFusionOptions, drop_constant_initializers, 4)                                           \
  X(OrtKernelImpl, ort_version_supported, 0) X(OrtKernelImpl, flags, 4)

#define ACTX_ORT_STRUCT_SIZES(X)                                                                   \
  X(OrtApiBase, 16) X(OrtApi, 3400) X(OrtEpApi, 592) X(OrtEp, 208) X(OrtEpFactory, 168)           \
  X(OrtNodeComputeInfo, 32) X(OrtNodeFusionOptions, 8) X(OrtKernelImpl, 40)

/* Every slot list but OrtAllocator's (which the TSV does not cover), for code that walks them. */
#define ACTX_ORT_ALL_SLOTS(X)                                                                      \
  ACTX_ORT_API_BASE_SLOTS(X) ACTX_ORT_API_SLOTS(X) ACTX_ORT_EP_API_SLOTS(X) ACTX_ORT_EP_SLOTS(X)   \
  ACTX_ORT_EP_FACTORY_SLOTS(X) ACTX_ORT_NODE_COMPUTE_INFO_SLOTS(X) ACTX_ORT_KERNEL_IMPL_SLOTS(X)

#define ACTX_ORT_ASSERT_SLOT_(S, m, slot)                                                          \
  _Static_assert(offsetof(S, m) == (slot) * sizeof(void *), #S "." #m " is not in slot " #slot);
#define ACTX_ORT_ASSERT_FIELD_(S, m, off)                                                          \
  _Static_assert(offsetof(S, m) == (off), #S "." #m " is not at byte " #off);
#define ACTX_ORT_ASSERT_SIZE_(S, size)                                                             \
  _Static_assert(sizeof(S) == (size), "sizeof " #S " is not " #size);
ACTX_ORT_ALL_SLOTS(ACTX_ORT_ASSERT_SLOT_)
ACTX_ORT_ALLOCATOR_SLOTS(ACTX_ORT_ASSERT_SLOT_)
ACTX_ORT_ASSERT_FIELD_(OrtAllocator, version, 0)
ACTX_ORT_DATA_FIELDS(ACTX_ORT_ASSERT_FIELD_)
ACTX_ORT_STRUCT_SIZES(ACTX_ORT_ASSERT_SIZE_)
#undef ACTX_ORT_ASSERT_SLOT_
#undef ACTX_ORT_ASSERT_FIELD_
#undef ACTX_ORT_ASSERT_SIZE_
/* clang-format on */

#ifdef __cplusplus
}
#endif

#endif /* ACTX_ORT_ABI_H */
