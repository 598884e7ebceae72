/* config_file_test.h -- used by the `config_file` option build of `make test`
 * (-DLGB_CONFIG_FILE="tests/config_file_test.h") to check that a configuration
 * file is read before the defaults. */
#define LGB_MAX_PAYLOAD 200
#define LGB_RETRIES 2
#define LGB_RX_RING_SIZE 128
