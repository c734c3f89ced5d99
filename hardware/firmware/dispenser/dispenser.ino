// Gizmos Referee: energy dispenser sensor board (reference build).
//
// Reports, over USB serial at 115200 baud, one framed line per event (docs/hardware.md):
//   HELLO at start, HB every second, ROW when a marble passes the Energy Row chute (with the
//   TCS34725's raw RGBC and a rough on-board colour guess; the host's calibration overrides it),
//   RET when marbles drop into the top (counted by a break-beam, grouped while they keep coming),
//   BTN for the turn button, ERR when the colour sensor is missing.
// The reference build has no sensor for blind draws, so it never sends DRAW.
// Framing lives in framing.h (plain C, tested on the host against hardware/test_vectors.json).
//
// Wiring and parts: ../README.md. Needs the "Adafruit TCS34725" library.

#include <Wire.h>
#include <Adafruit_TCS34725.h>

#include "framing.h"

static const char BOARD_ID[] = "gizmo-disp-01";
static const char FIRMWARE[] = "1.0.0";
static const uint8_t PROTOCOL = 1;

static const uint8_t PIN_CHUTE_BEAM = 2;  // break-beam receiver at the Energy Row chute (LOW = broken)
static const uint8_t PIN_TOP_BEAM = 3;    // break-beam receiver across the top opening
static const uint8_t PIN_BUTTON = 4;      // turn button to GND
static const uint8_t PIN_SENSOR_LED = 5;  // TCS34725 LED pin (lit only while reading)

static const unsigned long DEBOUNCE_MS = 5;
static const unsigned long BUTTON_DEBOUNCE_MS = 30;
static const unsigned long RETURN_QUIET_MS = 400;  // a handful thrown in together is one RET
static const unsigned long HEARTBEAT_MS = 1000;

Adafruit_TCS34725 tcs(TCS34725_INTEGRATIONTIME_24MS, TCS34725_GAIN_4X);
static bool sensorOk = false;
static uint16_t seq = 0;

static void sendLine(framing_t *f) {
  const char *line = framing_end(f);
  if (line != NULL) {
    Serial.write(line);
  }
  seq++;  // uint16_t wraps at 65536, as the host expects
}

// Debounced falling-edge detector for an active-LOW input.
struct Edge {
  uint8_t pin;
  unsigned long debounceMs;
  bool stable;
  bool last;
  unsigned long changedAt;

  bool fell(unsigned long now) {
    bool level = digitalRead(pin);
    if (level != last) {
      last = level;
      changedAt = now;
    }
    if (level != stable && now - changedAt >= debounceMs) {
      stable = level;
      return stable == LOW;
    }
    return false;
  }
};

static Edge chute = {PIN_CHUTE_BEAM, DEBOUNCE_MS, HIGH, HIGH, 0};
static Edge top = {PIN_TOP_BEAM, DEBOUNCE_MS, HIGH, HIGH, 0};
static Edge button = {PIN_BUTTON, BUTTON_DEBOUNCE_MS, HIGH, HIGH, 0};

// Rough guess from chromaticity; good enough to read a log, not to referee a game.
static const char *guessColor(uint16_t r, uint16_t g, uint16_t b, uint16_t c) {
  uint32_t sum = (uint32_t)r + g + b;
  if (sum == 0) return "unknown";
  if (c < 500) return "black";
  if (b * 2UL > sum) return "blue";
  if (r * 2UL > sum) return g * 4UL > sum ? "yellow" : "red";
  if (r + g > b * 3UL) return "yellow";
  return "unknown";
}

static void sendRow() {
  framing_t f;
  uint16_t r = 0, g = 0, b = 0, c = 0;
  if (sensorOk) {
    digitalWrite(PIN_SENSOR_LED, HIGH);
    delay(30);  // one 24 ms integration with the marble lit
    tcs.getRawData(&r, &g, &b, &c);
    digitalWrite(PIN_SENSOR_LED, LOW);
  }
  framing_begin(&f, seq, "ROW");
  framing_add_str(&f, sensorOk ? guessColor(r, g, b, c) : "unknown");
  framing_add_uint(&f, r);
  framing_add_uint(&f, g);
  framing_add_uint(&f, b);
  framing_add_uint(&f, c);
  sendLine(&f);
}

static void sendSimple(const char *type) {
  framing_t f;
  framing_begin(&f, seq, type);
  sendLine(&f);
}

void setup() {
  pinMode(PIN_CHUTE_BEAM, INPUT_PULLUP);
  pinMode(PIN_TOP_BEAM, INPUT_PULLUP);
  pinMode(PIN_BUTTON, INPUT_PULLUP);
  pinMode(PIN_SENSOR_LED, OUTPUT);
  digitalWrite(PIN_SENSOR_LED, LOW);
  Serial.begin(115200);
  sensorOk = tcs.begin();

  framing_t f;
  Serial.write('\n');  // end whatever partial line the host saw while we were resetting
  framing_begin(&f, seq, "HELLO");
  framing_add_str(&f, BOARD_ID);
  framing_add_str(&f, FIRMWARE);
  framing_add_uint(&f, PROTOCOL);
  sendLine(&f);
  if (!sensorOk) {
    framing_begin(&f, seq, "ERR");
    framing_add_str(&f, "no_color_sensor");
    sendLine(&f);
  }
}

void loop() {
  static unsigned long lastBeat = 0;
  static unsigned long lastReturn = 0;
  static uint8_t pendingReturns = 0;
  unsigned long now = millis();

  if (chute.fell(now)) sendRow();
  if (top.fell(now)) {
    pendingReturns++;
    lastReturn = now;
  }
  if (pendingReturns && (now - lastReturn >= RETURN_QUIET_MS || pendingReturns >= 60)) {
    framing_t f;
    framing_begin(&f, seq, "RET");
    framing_add_uint(&f, pendingReturns);  // colours are not sensed at the top in this build
    sendLine(&f);
    pendingReturns = 0;
  }
  if (button.fell(now)) sendSimple("BTN");
  if (now - lastBeat >= HEARTBEAT_MS) {
    lastBeat = now;
    framing_t f;
    framing_begin(&f, seq, "HB");
    framing_add_uint(&f, now);
    sendLine(&f);
  }
}
