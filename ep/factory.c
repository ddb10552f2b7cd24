/* The library's entry points and its OrtEpFactory.
 *
 * ORT loads the library with RegisterExecutionProviderLibrary(env, name, absolute path) and
 * calls the two exported functions, CreateEpFactories and ReleaseEpFactory (the only symbols
 * exports.map leaves visible). The factory offers the EP on every CPU hardware device and
 * creates one OrtEp per session. The EP works in plain CPU memory, so it registers no allocator
 * and no data transfer: ORT's CPU allocator serves its inputs and outputs. */
#include <stdlib.h>

#include "actx_ep.h"

typedef struct actx_ep_factory {
  OrtEpFactory base; /* first: ORT hands &base back */
  const OrtApi *api;
  const OrtEpApi *ep_api;
} actx_ep_factory;

static const char *factory_get_name(const OrtEpFactory *self) {
  (void)self;
  return ACTX_EP_NAME;
}

static const char *factory_get_vendor(const OrtEpFactory *self) {
  (void)self;
  return ACTX_EP_VENDOR;
}

static uint32_t factory_get_vendor_id(const OrtEpFactory *self) {
  (void)self;
  return 0; /* not a PCI vendor */
}

static const char *factory_get_version(const OrtEpFactory *self) {
  (void)self;
  return actx_version_string();
}

static OrtStatus *factory_get_supported_devices(OrtEpFactory *self,
                                                const OrtHardwareDevice *const *devices,
                                                size_t num_devices, OrtEpDevice **ep_devices,
                                                size_t max_ep_devices, size_t *num_ep_devices) {
  actx_ep_factory *f = (actx_ep_factory *)self;
  *num_ep_devices = 0;
  for (size_t i = 0; i < num_devices && *num_ep_devices < max_ep_devices; i++) {
    if (f->api->HardwareDevice_Type(devices[i]) != OrtHardwareDeviceType_CPU) continue;
    OrtEpDevice *device = NULL;
    OrtStatus *st = f->ep_api->CreateEpDevice(self, devices[i], NULL, NULL, &device);
    if (st != NULL) return st;
    ep_devices[(*num_ep_devices)++] = device;
  }
  return NULL;
}

static OrtStatus *factory_create_ep(OrtEpFactory *self, const OrtHardwareDevice *const *devices,
                                    const OrtKeyValuePairs *const *ep_metadata, size_t num_devices,
                                    const OrtSessionOptions *session_options,
                                    const OrtLogger *logger, OrtEp **ep) {
  (void)devices;
  (void)ep_metadata;
  actx_ep_factory *f = (actx_ep_factory *)self;
  *ep = NULL;
  if (num_devices == 0)
    return actx_ep_error(f->api, ORT_INVALID_ARGUMENT, "CreateEp called without a device");
  actx_ep_options options;
  OrtStatus *st = actx_ep_options_read(f->api, session_options, &options);
  if (st != NULL) return st;
  return actx_ep_create(f->api, logger, &options, ep);
}

static void factory_release_ep(OrtEpFactory *self, OrtEp *ep) {
  (void)self;
  actx_ep_release(ep);
}

/* ORT 1.30 calls this without checking the pointer; NULL means "no data transfer needed". */
static OrtStatus *factory_create_data_transfer(OrtEpFactory *self,
                                               OrtDataTransferImpl **data_transfer) {
  (void)self;
  *data_transfer = NULL;
  return NULL;
}

static bool factory_is_stream_aware(const OrtEpFactory *self) {
  (void)self;
  return false;
}

/* Builds an error status even when the library is older than ORT_API_VERSION: CreateStatus is
 * slot 0 of every OrtApi version. */
static OrtStatus *early_error(const OrtApiBase *base, const OrtApi *api, OrtErrorCode code,
                              const char *msg) {
  if (api == NULL) api = base->GetApi(1);
  return api != NULL ? api->CreateStatus(code, msg) : NULL;
}

__attribute__((visibility("default"))) OrtStatus *CreateEpFactories(
    const char *registration_name, const OrtApiBase *ort_api_base, const OrtLogger *default_logger,
    OrtEpFactory **factories, size_t max_factories, size_t *num_factories) {
  (void)registration_name; /* the EP is always called ACTX_EP_NAME: options key off it */
  (void)default_logger;
  *num_factories = 0;
  const OrtApi *api = ort_api_base->GetApi(ORT_API_VERSION);
  if (api == NULL)
    return early_error(ort_api_base, NULL, ORT_NOT_IMPLEMENTED,
                       "actx EP: needs ONNX Runtime with API version 30 (1.30) or newer");
  if (max_factories < 1)
    return early_error(ort_api_base, api, ORT_INVALID_ARGUMENT,
                       "actx EP: no room for the factory (max_factories is 0)");

  actx_ep_factory *f = calloc(1, sizeof *f); /* zeroed: unimplemented slots are NULL */
  if (f == NULL) return early_error(ort_api_base, api, ORT_FAIL, "actx EP: out of memory");
  f->api = api;
  f->ep_api = api->GetEpApi();
  f->base.ort_version_supported = ORT_API_VERSION;
  f->base.GetName = factory_get_name;
  f->base.GetVendor = factory_get_vendor;
  f->base.GetSupportedDevices = factory_get_supported_devices;
  f->base.CreateEp = factory_create_ep;
  f->base.ReleaseEp = factory_release_ep;
  f->base.GetVendorId = factory_get_vendor_id;
  f->base.GetVersion = factory_get_version;
  f->base.CreateDataTransfer = factory_create_data_transfer;
  f->base.IsStreamAware = factory_is_stream_aware;
  factories[0] = &f->base;
  *num_factories = 1;
  return NULL;
}

__attribute__((visibility("default"))) OrtStatus *ReleaseEpFactory(OrtEpFactory *factory) {
  free(factory);
  return NULL;
}
